"""Build-time arithmetic that TFLM does in its kernels' Prepare, reproduced bit for bit.

Sources of truth: tensorflow/lite/kernels/internal/quantization_util.cc (QuantizeMultiplier),
kernel_util.cc (CalculateActivationRangeQuantized, Quantize), padding.h (ComputePaddingHeightWidth).
"""

from __future__ import annotations

import math
from collections.abc import Callable

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

    Factors below 2^-32 in magnitude flush to zero, as in TFLM; a factor that is not finite or
    needs a left shift over `MAX_LEFT_SHIFT` (scales out of proportion) is an `UnsupportedError`.
    A negative factor (a convolution's negative filter scale) keeps its sign, as frexp keeps it
    in TFLM: its multiplier is in [-2^31, -2^30] (-2^31 is not halved: only +2^31 overflows),
    and the kernels' MultiplyByQuantizedMultiplier applies it as it is."""
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
    """QuantizeMultiplierSmallerThanOneExp: requires 0 < real < 1 (TFLM aborts outside),
    shift <= 0."""
    if not 0.0 < real < 1.0:
        raise UnsupportedError(f"rescale factor {real} is outside (0, 1)")
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


LUT_STEPS = 512  # an int16 LUT has LUT_STEPS + 1 entries


def _round_f32(x: np.float32) -> np.float32:
    """TfLiteRound on a float: roundf, halves away from zero."""
    return np.float32(round_half_away(float(x)))


def lut_int16(
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    transform: Callable[[np.float32], np.float32],
) -> tuple[int, ...]:
    """LUTPopulateInt16<float>: 512 samples of `transform` over the int16 input range plus the
    last point, each sample biased by half the error of linear interpolation at the midpoint.
    Every operation in float32, in the C++ order."""
    f32 = np.float32
    in_min = f32(input_scale) * f32(-32768 - input_zero_point)
    in_max = f32(input_scale) * f32(32767 - input_zero_point)
    out_min = f32(output_scale) * f32(-32768 - output_zero_point)
    out_max = f32(output_scale) * f32(32767 - output_zero_point)
    step = (in_max - in_min) / f32(LUT_STEPS)
    half_step = step / f32(2)
    inv = f32(65536) / (out_max - out_min)

    def clamp(x: np.float32) -> int:
        return int(min(max(x, f32(-32768)), f32(32767)))

    lut = []
    for i in range(LUT_STEPS):
        start = in_min + f32(i) * step
        val, val_mid = transform(start), transform(start + half_step)
        val_next = transform(in_min + f32(i + 1) * step)
        sample = _round_f32(val * inv)
        interpolated = _round_f32((val_next * inv + _round_f32(val * inv)) / f32(2))
        bias = _round_f32((interpolated - _round_f32(val_mid * inv)) / f32(2))
        lut.append(clamp(sample - bias))
    lut.append(clamp(_round_f32(transform(in_max) * inv)))
    return tuple(lut)


def exp_f32(x: np.float32) -> np.float32:
    """std::exp(float), as expf: exp in double rounded once to float32."""
    return np.float32(math.exp(float(x)))


def one_over_one_plus_x_f32(x: np.float32) -> np.float32:
    return np.float32(1.0) / (np.float32(1.0) + x)


def sigmoid_table_uint16() -> tuple[int, ...]:
    """The table TFLM's int16 LOGISTIC and TANH interpolate: sigmoid(i / 24) in Q0.16, each of
    entries 0..254 lowered by half the error that linear interpolation makes at its segment's
    midpoint; entry 255 is full scale. (Checked against TFLM by the int16 kernel tests.)"""

    def sigmoid_q16(x: float) -> float:
        return 65536.0 / (1.0 + math.exp(-x))

    table = []
    for i in range(255):
        v, v_next, v_mid = (sigmoid_q16(k / 24) for k in (i, i + 1, i + 0.5))
        table.append(min(65535, int(round_half_away(v - ((v + v_next) / 2 - v_mid) / 2))))
    return (*table, 65535)


def checked_log2(x: float) -> tuple[bool, int]:
    """CheckedLog2 in float32: (x is a power of two within 1e-3 of an exponent, that exponent)."""
    f32 = np.float32
    log2 = f32(math.log(float(f32(x)))) * (f32(1.0) / f32(math.log(2.0)))
    rounded = f32(round_half_away(float(log2)))
    return bool(abs(log2 - rounded) < f32(1e-3)), int(rounded)


def int16_lut_input_scaling(scale: float, pot_shifts: tuple[int, ...]) -> tuple[int, int]:
    """(multiplier, left_shift) of TFLM's int16 LOGISTIC / TANH Prepare: multiplier 0 when the
    input scale is a power of two giving one of `pot_shifts`, else scale * 3 * 4096 doubled until
    above 32767 / 2, truncated."""
    pot, log2 = checked_log2(scale)
    shift = 12 + log2
    if pot and shift in pot_shifts:
        return 0, shift
    multiplier, shift = float(np.float32(scale)) * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and shift <= 30:
        shift, multiplier = shift + 1, multiplier * 2.0
    return int(multiplier), shift


# ---- TFLM's integer rescaling, evaluated exactly at build time (for tables of int8 inputs) ----

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def wrap_i32(x: int) -> int:
    """`x` modulo 2^32 as a signed 32-bit value (C's wrapping int32 arithmetic)."""
    return (x + 2**31) % 2**32 - 2**31


def srdhm(a: int, b: int) -> int:
    """gemmlowp::SaturatingRoundingDoublingHighMul of two int32 values (runtime.h mcu_srdhm)."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    total = ab + (1 << 30 if ab >= 0 else 1 - (1 << 30))
    quotient = abs(total) >> 31  # C's division truncates toward zero
    return quotient if total >= 0 else -quotient


def rdbpot(x: int, exponent: int) -> int:
    """gemmlowp::RoundingDivideByPOT: round half away from zero (mcu_rdbpot)."""
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if (x & mask) > threshold else 0)


def mbqm_smaller_than_one(x: int, multiplier: int, shift: int) -> int:
    """tflite::MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0)."""
    return rdbpot(srdhm(x, multiplier), -shift)
