"""SOFTMAX: int8 input with int8 or int16 output, int16 (TFLM's lookup-table path) and float32
(TFLM softmax_common.cc)."""

from __future__ import annotations

import math

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import (
    check_dtype,
    check_int16_zero_points,
    check_operands,
    invalid,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "float32")

PARAMS = "mcu_softmax_params_t"
SCALED_DIFF_INTEGER_BITS = 5


def preprocess_softmax_scaling(beta: float, input_scale: float) -> tuple[int, int]:
    """PreprocessSoftmaxScaling (double rounding build): beta * s_in as a Q5.26 multiplier."""
    real = min(beta * input_scale * (1 << (31 - SCALED_DIFF_INTEGER_BITS)), (1 << 31) - 1.0)
    if real <= 1.0:
        raise ValueError(f"beta * input scale * 2^26 = {real} is not above one")
    return quant.quantize_multiplier(real)


def input_radius(left_shift: int, total_signed_bits: int = 31) -> int:
    """CalculateInputRadius(5, left_shift): the largest input difference that still counts."""
    bits = SCALED_DIFF_INTEGER_BITS
    rescaled = 1.0 * ((1 << bits) - 1) * (1 << (total_signed_bits - bits)) / (1 << left_shift)
    return math.floor(rescaled)


def _check_output(op: Operator, y: Tensor) -> None:
    """The fixed output quantization TFLM requires: 1/256, -128 (int8); 1/65536, -32768 (int16)."""
    q = qparams(op, y)
    scale = np.float32(q.scale)
    if y.dtype == "int8":
        if q.zero_point != -128 or scale != np.float32(1.0) / np.float32(256):
            raise unsupported(op, "int8 output must have scale 1/256 and zero point -128")
        return
    target = np.float32(1.0) / np.float32(65536)
    if q.zero_point != -32768 or abs(scale - target) > np.float32(0.001) * target:
        raise unsupported(op, "int16 output must have scale 1/65536 and zero point -32768")


def _quantized(op: Operator, x: Tensor, y: Tensor, beta: float) -> Lowered:
    check_dtype(op, y, "int8", "int16")
    _check_output(op, y)
    try:
        multiplier, shift = preprocess_softmax_scaling(beta, qparams(op, x).scale)
    except ValueError as exc:
        raise unsupported(op, str(exc)) from None
    params = (
        ("input_multiplier", multiplier),
        ("input_left_shift", shift),
        ("diff_min", -input_radius(shift)),
    )
    function = "mcu_softmax_int8" if y.dtype == "int8" else "mcu_softmax_int8_int16"
    return Lowered("softmax", function, PARAMS, params)


def _int16(op: Operator, x: Tensor, y: Tensor, beta: float) -> Lowered:
    """InitializeLutForInt16 and CalculateSoftmaxParams: exp over [-10, 0] and 1 / (1 + x) over
    [0, 1] as 513-entry tables, the input rescaled so that a difference of -65535 is -10."""
    check_dtype(op, y, "int16")
    check_int16_zero_points(op, x, y)
    target = np.float32(1.0) / np.float32(32768)
    if abs(np.float32(qparams(op, y).scale) - target) > np.float32(0.001) * target:
        raise unsupported(op, "int16 output must have scale 1/32768")
    multiplier, shift = quant.quantize_multiplier(qparams(op, x).scale * beta / (10.0 / 65535.0))
    span = np.float32(65535)  # int16 max - min, as a float in the C++ divisions
    out_scale = float(np.float32(2.0) / span)
    exp_lut = quant.lut_int16(float(np.float32(10.0) / span), 32767, out_scale, 0, quant.exp_f32)
    reciprocal_lut = quant.lut_int16(
        float(np.float32(1.0) / span), -32768, out_scale, 0, quant.one_over_one_plus_x_f32
    )
    params = (
        ("input_multiplier", multiplier),
        ("input_left_shift", shift),
        ("exp_lut", Array("int16_t", exp_lut)),
        ("one_over_one_plus_x_lut", Array("int16_t", reciprocal_lut)),
    )
    return Lowered("softmax", "mcu_softmax_int16", "mcu_softmax_int16_params_t", params)


@register("SOFTMAX", types=TYPES)
def lower_softmax(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (1,))
    x, y = req(graph, op, 0), out(graph, op)
    dtype = check_dtype(op, x, *TYPES)
    if not x.shape or x.shape[-1] < 1 or x.num_elements != y.num_elements:
        raise unsupported(op, f"input shape {x.shape} / output shape {y.shape} not supported")
    if y.shape != x.shape:  # TFLM then writes part of the output, or elsewhere
        raise invalid(op, f"output shape {y.shape} is not the input's {x.shape}")
    if "beta" not in op.options:
        raise invalid(op, "has no options table (beta); TFLM would take beta = 0")
    beta = float(np.float32(op.options["beta"]))
    if not math.isfinite(beta):
        raise invalid(op, f"beta {beta} is not finite")
    if dtype == "int8":
        return _quantized(op, x, y, beta)
    if dtype == "int16":
        return _int16(op, x, y, beta)
    check_dtype(op, y, "float32")
    return Lowered("softmax", "mcu_softmax_f32", PARAMS, (("beta", beta),))
