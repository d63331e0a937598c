"""LOGISTIC: float32 and int8 (TFLM's gemmlowp fixed-point path, output scale 1/256 zp -128)."""

from __future__ import annotations

import math

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import (
    OVERWRITES_INPUT,
    qparams,
    unsupported,
)
from mcugen.codegen.lower.activations import unary_operands
from mcugen.model.ir import Graph, Operator, Tensor

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


@register("LOGISTIC", traits=OVERWRITES_INPUT)
def lower_logistic(graph: Graph, op: Operator) -> Lowered:
    """float32: 1 / (1 + exp(-x)) with TFLM's cut-offs; int8: fixed point, output zp -128."""
    x, y, dtype = unary_operands(graph, op, "float32", "int8")
    if dtype == "float32":
        return Lowered("logistic", "mcu_logistic_f32", PARAMS)
    if qparams(op, y).zero_point != -128:
        raise unsupported(op, "int8 output zero point must be -128 (scale 1/256)")
    return Lowered("logistic", "mcu_logistic_int8", PARAMS, q4_input_params(op, x))
