"""RELU and RELU6: int8 and float32 (micro/kernels/activations_common.cc)."""

from __future__ import annotations

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import (
    POINTWISE_UNARY,
    check_dtype,
    check_operands,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of RELU and RELU6 (declared with their registration).
RELU_TYPES = ("int8", "float32")
PARAMS = "mcu_activations_params_t"
INT8_MIN, INT8_MAX = quant.INT_RANGES["int8"]


def unary_operands(graph: Graph, op: Operator, *dtypes: str) -> tuple[Tensor, Tensor, str]:
    """(input, output, dtype) of an elementwise unary op: one dtype, same element count."""
    check_operands(op, (1,))
    x, y = req(graph, op, 0), out(graph, op)
    dtype = check_dtype(op, x, *dtypes)
    check_dtype(op, y, dtype)
    if x.num_elements != y.num_elements:
        raise unsupported(op, f"input shape {x.shape} and output shape {y.shape} differ in size")
    return x, y, dtype


def relu_int8_params(op: Operator, x: Tensor, y: Tensor) -> tuple[tuple[str, int], ...]:
    """CalculateReluOpData: multiplier double(s_in) / double(s_out) (the pip interpreter divides
    in double), act_min = max(-128, output zero point), act_max = 127."""
    qx, qy = qparams(op, x), qparams(op, y)
    multiplier, shift = quant.quantize_multiplier(qx.scale / qy.scale)
    lo = max(INT8_MIN, qy.zero_point)  # zero point + roundf(0.0f / scale)
    return (
        ("input_zero_point", qx.zero_point),
        ("output_offset", qy.zero_point),
        ("output_multiplier", multiplier),
        ("output_shift", shift),
        ("act_min", lo),
        ("act_max", INT8_MAX),
    )


def relu6_int8_params(op: Operator, x: Tensor) -> tuple[tuple[str, int], ...]:
    """Relu6Prepare: clamp raw values to [input zero point, FloatToQuantizedType(6.0f)]."""
    qx = qparams(op, x)
    with np.errstate(over="ignore"):  # an infinite quotient is rejected by round_half_away
        six_steps = quant.round_half_away(float(np.float32(6.0) / np.float32(qx.scale)))
    if abs(six_steps) >= 2**31:
        raise unsupported(op, f"input scale {qx.scale} is too small to represent 6.0")
    six = min(INT8_MAX, max(INT8_MIN, int(six_steps) + qx.zero_point))
    return (("act_min", qx.zero_point), ("act_max", six))


@register("RELU", "RELU6", traits=POINTWISE_UNARY, types=RELU_TYPES)
def lower_relu(graph: Graph, op: Operator) -> Lowered:
    x, y, dtype = unary_operands(graph, op, *RELU_TYPES)
    name = op.opcode.lower()
    if dtype == "float32":
        return Lowered("activations", f"mcu_{name}_f32")
    params = relu_int8_params(op, x, y) if op.opcode == "RELU" else relu6_int8_params(op, x)
    return Lowered("activations", f"mcu_{name}_int8", PARAMS, params)
