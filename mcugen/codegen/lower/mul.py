"""MUL: int8, int16 (zero points 0), int32 and float32, with numpy broadcasting.

int32 is TFLM's unquantized path (reference_ops::Mul / BroadcastMul4DSlow): a wrapping product
clamped to CalculateActivationRange<int32_t>; TFLM ignores any quantization there, and its
broadcast path handles at most 4 dimensions.
"""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import (
    activation_params,
    check_int16_zero_points,
    elementwise_traits,
    int32_activation_params,
    qparams,
    unsupported,
)
from mcugen.codegen.lower.add import binary_operands
from mcugen.model.ir import Graph, Operator

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "int32", "float32")

PARAMS = "mcu_mul_params_t"
MAX_INT32_BROADCAST_DIMS = 4


@register("MUL", traits=elementwise_traits, types=TYPES)
def lower_mul(graph: Graph, op: Operator) -> Lowered:
    """mul_common.cc: QuantizeMultiplier(double(s1) * double(s2) / double(s_out))."""
    a, b, y, dtype = binary_operands(graph, op, *TYPES)
    if dtype == "int32":
        if a.shape != b.shape and len(y.shape) > MAX_INT32_BROADCAST_DIMS:
            raise unsupported(op, f"int32 broadcasting over {len(y.shape)} dimensions (TFLM: 4)")
        return Lowered("mul", "mcu_mul_int32", PARAMS, int32_activation_params(op))
    act = activation_params(op, y)
    if dtype == "float32":
        return Lowered("mul", "mcu_mul_f32", PARAMS, act)
    if dtype == "int16":
        check_int16_zero_points(op, a, b, y)
    qa, qb, qy = qparams(op, a), qparams(op, b), qparams(op, y)
    multiplier, shift = quant.quantize_multiplier(qa.scale * qb.scale / qy.scale)
    params = (
        ("input1_offset", -qa.zero_point),
        ("input2_offset", -qb.zero_point),
        ("output_offset", qy.zero_point),
        ("output_multiplier", multiplier),
        ("output_shift", shift),
        *act,
    )
    return Lowered("mul", f"mcu_mul_{dtype}", PARAMS, params)
