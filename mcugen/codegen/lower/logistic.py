"""LOGISTIC: float32, int8 (TFLM's gemmlowp fixed-point path, output scale 1/256 zp -128) and int16
(TFLM's interpolated sigmoid table, zero points 0, output scale 2^-15)."""

from __future__ import annotations

import math

from mcugen.codegen import quant
from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import (
    POINTWISE_UNARY,
    check_int16_zero_points,
    qparams,
    unsupported,
)
from mcugen.codegen.lower.activations import unary_operands
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "float32")

PARAMS = "mcu_logistic_params_t"
INPUT_INTEGER_BITS = 4  # the int8 kernels evaluate on Q4.27


def q4_input_params(op: Operator, x: Tensor) -> tuple[tuple[str, int], ...]:
    """Prepare of TFLM's int8 LOGISTIC and TANH: rescale q - zp to Q4.27, saturation radius.

    multiplier/shift come from frexp(double(scale) * 2^27) with the significand rounded half
    away (no QuantizeMultiplier clean-ups); the radius is floor(15 * 2^27 / 2^shift), as
    CalculateInputRadius.
    """
    qx = qparams(op, x)
    if qx.per_channel:
        raise unsupported(op, f"tensor {x.index} is quantized per channel")
    real = qx.scale * float(1 << (31 - INPUT_INTEGER_BITS))
    significand, shift = math.frexp(real)
    if not 0 <= shift <= 62:
        raise unsupported(op, f"input scale {qx.scale} is out of the supported range")
    multiplier = int(quant.round_half_away(significand * float(1 << 31)))
    max_rescaled = float((1 << INPUT_INTEGER_BITS) - 1) * float(1 << (31 - INPUT_INTEGER_BITS))
    radius = math.floor(max_rescaled / float(1 << shift))
    return (
        ("input_zero_point", qx.zero_point),
        ("input_range_radius", radius),
        ("input_multiplier", multiplier),
        ("input_left_shift", shift),
    )


def int16_table_params(
    op: Operator, x: Tensor, y: Tensor, pot_shifts: tuple[int, ...]
) -> tuple[tuple[str, int | Array], ...]:
    """Prepare of TFLM's int16 LOGISTIC and TANH: symmetric tensors, an output scale of 2^-15,
    and the input rescaled to the sigmoid table's 1 / (3 * 4096) steps."""
    check_int16_zero_points(op, x, y)
    pot, log2 = quant.checked_log2(qparams(op, y).scale)
    if not pot or log2 != -15:
        raise unsupported(op, "int16 output scale must be 2^-15 (TFLM requires it)")
    multiplier, shift = quant.int16_lut_input_scaling(qparams(op, x).scale, pot_shifts)
    if multiplier > 32767 or not 0 <= shift <= 31:
        raise unsupported(op, f"int16 input scale {qparams(op, x).scale} is too large")
    return (
        ("input_multiplier", multiplier),
        ("input_left_shift", shift),
        ("sigmoid_table", Array("uint16_t", quant.sigmoid_table_uint16())),
    )


@register("LOGISTIC", traits=POINTWISE_UNARY, types=TYPES)
def lower_logistic(graph: Graph, op: Operator) -> Lowered:
    """float32: 1 / (1 + exp(-x)) with TFLM's cut-offs; int8: fixed point, output zp -128."""
    x, y, dtype = unary_operands(graph, op, *TYPES)
    if dtype == "float32":
        return Lowered("logistic", "mcu_logistic_f32", PARAMS)
    if dtype == "int16":
        params = int16_table_params(op, x, y, (0,))
        return Lowered("logistic", "mcu_logistic_int16", "mcu_logistic_int16_params_t", params)
    if qparams(op, y).zero_point != -128:
        raise unsupported(op, "int8 output zero point must be -128 (scale 1/256)")
    return Lowered("logistic", "mcu_logistic_int8", PARAMS, q4_input_params(op, x))
