"""Build-time arithmetic that TFLM does in its kernels' Prepare, reproduced bit for bit.

Sources of truth: tensorflow/lite/kernels/internal/quantization_util.cc (QuantizeMultiplier),
kernel_util.cc (CalculateActivationRangeQuantized, Quantize), padding.h (ComputePaddingHeightWidth).
"""

from __future__ import annotations

import math

import numpy as np

from mcugen.errors import UnsupportedError

FLOAT_LOWEST = float(np.finfo(np.float32).min)
FLOAT_MAX = float(np.finfo(np.float32).max)

ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6, ACT_TANH, ACT_SIGN_BIT = range(6)

INT_RANGES = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),
}


#: The largest left shift of a multiplier the kernels apply to an int32: TFLM's
#: MultiplyByQuantizedMultiplier computes x * (1 << shift), undefined from 31 bits on.
MAX_LEFT_SHIFT = 30


def round_half_away(x: float) -> float:
    """std::round / TfLiteRound: halves round away from zero. A value that is not finite (a scale
    so small that a quotient overflows float32) cannot become an integer: `UnsupportedError`."""
    if not math.isfinite(x):
        raise UnsupportedError(f"a quantized value computed from the scales is {x}")
    return math.copysign(math.floor(abs(x) + 0.5), x)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """(multiplier, shift) with real = multiplier * 2^(shift - 31), as TFLM's QuantizeMultiplier.

    Factors below 2^-32 flush to zero, as in TFLM; a factor that is not finite or needs a left
    shift over `MAX_LEFT_SHIFT` (scales out of proportion) is an `UnsupportedError`."""
    if real == 0.0:
        return 0, 0
    if not math.isfinite(real):
        raise UnsupportedError(f"rescale factor {real} computed from the scales is not finite")
    q, shift = math.frexp(real)
    q_fixed = int(round_half_away(q * (1 << 31)))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift, q_fixed = 0, 0
    if shift > MAX_LEFT_SHIFT:
        raise UnsupportedError(
            f"rescale factor {real:g} is too large: a left shift of {shift} bits, where the "
            f"kernels allow at most {MAX_LEFT_SHIFT} (the scales are out of proportion)"
        )
    return q_fixed, shift


def quantize_multiplier_smaller_than_one_exp(real: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: requires 0 < real < 1, shift <= 0."""
    mult, shift = quantize_multiplier(real)
    if shift > 0:
        raise UnsupportedError(f"rescale factor {real} is not below one")
    return mult, shift


def quantize_value(scale: float, zero_point: int, f: float) -> int:
    """kernel_util.cc Quantize(): float32 division, round half away, plus the zero point."""
    with np.errstate(over="ignore"):  # an infinite quotient is rejected by round_half_away
        tmp = round_half_away(float(np.float32(f) / np.float32(scale)))
    return zero_point + int(tmp)


def activation_range_quantized(
    activation: int, scale: float, zero_point: int, dtype: str = "int8"
) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for a fused activation on an output of `dtype`."""
    qmin, qmax = INT_RANGES[dtype]
    if activation == ACT_RELU:
        return max(qmin, quantize_value(scale, zero_point, 0.0)), qmax
    if activation == ACT_RELU6:
        lo = max(qmin, quantize_value(scale, zero_point, 0.0))
        return lo, min(qmax, quantize_value(scale, zero_point, 6.0))
    if activation == ACT_RELU_N1_TO_1:
        lo = max(qmin, quantize_value(scale, zero_point, -1.0))
        return lo, min(qmax, quantize_value(scale, zero_point, 1.0))
    if activation == ACT_NONE:
        return qmin, qmax
    raise UnsupportedError(f"fused activation {activation} is not supported on quantized kernels")


def activation_range_float(activation: int) -> tuple[float, float]:
    """CalculateActivationRange<float>."""
    if activation == ACT_RELU:
        return 0.0, FLOAT_MAX
    if activation == ACT_RELU6:
        return 0.0, 6.0
    if activation == ACT_RELU_N1_TO_1:
        return -1.0, 1.0
    if activation == ACT_NONE:
        return FLOAT_LOWEST, FLOAT_MAX
    raise UnsupportedError(f"fused activation {activation} is not supported on float kernels")


def out_size(padding: int, image: int, filt: int, stride: int, dilation: int = 1) -> int:
    """ComputeOutSize; padding 0 = SAME, 1 = VALID."""
    eff = (filt - 1) * dilation + 1
    if padding == 0:
        return (image + stride - 1) // stride
    return (image + stride - eff) // stride


def padding_with_offset(
    stride: int, dilation: int, in_size: int, filt: int, out: int
) -> tuple[int, int]:
    """ComputePaddingWithOffset: (padding before, extra padding after)."""
    eff = (filt - 1) * dilation + 1
    total = max((out - 1) * stride + eff - in_size, 0)
    return total // 2, total % 2


def conv_padding(
    padding: int,
    stride: tuple[int, int],
    dilation: tuple[int, int],
    in_hw: tuple[int, int],
    filt_hw: tuple[int, int],
) -> tuple[int, int]:
    """ComputePaddingHeightWidth: (pad_h, pad_w) as TFLM passes them to the reference kernels."""
    pads = []
    for i in range(2):
        out = out_size(padding, in_hw[i], filt_hw[i], stride[i], dilation[i])
        pad, _ = padding_with_offset(stride[i], dilation[i], in_hw[i], filt_hw[i], out)
        pads.append(pad)
    return pads[0], pads[1]
