"""LEAKY_RELU: int8, int16 (zero points 0) and float32 (micro/kernels/leaky_relu_common.cc)."""

from __future__ import annotations

import math

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import (
    POINTWISE_UNARY,
    check_int16_zero_points,
    invalid,
    qparams,
    unsupported,
)
from mcugen.codegen.lower.activations import unary_operands
from mcugen.model.ir import Graph, Operator

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "float32")

PARAMS = "mcu_leaky_relu_params_t"


@register("LEAKY_RELU", traits=POINTWISE_UNARY, types=TYPES)
def lower_leaky_relu(graph: Graph, op: Operator) -> Lowered:
    """Factors double(s_in) / double(s_out) and double(s_in) * double(alpha) / double(s_out) (the
    pip interpreter computes both in double), each through QuantizeMultiplier."""
    x, y, dtype = unary_operands(graph, op, *TYPES)
    alpha = float(np.float32(op.options.get("alpha", 0.0)))
    if not math.isfinite(alpha):
        raise invalid(op, f"alpha {alpha} is not finite")
    if dtype == "float32":
        return Lowered("leaky_relu", "mcu_leaky_relu_f32", PARAMS, (("alpha", alpha),))
    if dtype == "int16":
        check_int16_zero_points(op, x, y)
    qx, qy = qparams(op, x), qparams(op, y)
    identity = quant.quantize_multiplier(qx.scale / qy.scale)
    alpha_mult, alpha_shift = quant.quantize_multiplier(qx.scale * alpha / qy.scale)
    if abs(alpha_mult) > 2**31 - 1:
        raise unsupported(op, f"alpha {alpha} rounds to a multiplier of -2^31, which TFLM negates")
    params = (
        ("input_zero_point", qx.zero_point),
        ("output_offset", qy.zero_point),
        ("identity_multiplier", identity[0]),
        ("identity_shift", identity[1]),
        ("alpha_multiplier", abs(alpha_mult)),
        ("alpha_shift", alpha_shift),
        ("alpha_negative", int(alpha_mult < 0)),
        ("alpha", alpha),
    )
    return Lowered("leaky_relu", f"mcu_leaky_relu_{dtype}", PARAMS, params)
