"""TANH: float32, int8 (TFLM's gemmlowp fixed-point path, output as scale 1/128 zp 0) and int16
(TFLM's interpolated sigmoid table, zero points 0, output scale 2^-15)."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import POINTWISE_UNARY
from mcugen.codegen.lower.activations import unary_operands
from mcugen.codegen.lower.logistic import int16_table_params, q4_input_params
from mcugen.model.ir import Graph, Operator

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "float32")

PARAMS = "mcu_tanh_params_t"


@register("TANH", traits=POINTWISE_UNARY, types=TYPES)
def lower_tanh(graph: Graph, op: Operator) -> Lowered:
    """float32: tanhf; int8: fixed point. Like TFLM, the int8 output's quantization is not read:
    the kernel always produces scale 1/128, zero point 0 (what converters emit)."""
    x, y, dtype = unary_operands(graph, op, *TYPES)
    if dtype == "float32":
        return Lowered("tanh", "mcu_tanh_f32", PARAMS)
    if dtype == "int16":
        params = int16_table_params(op, x, y, (0, 1))
        return Lowered("tanh", "mcu_tanh_int16", "mcu_tanh_int16_params_t", params)
    return Lowered("tanh", "mcu_tanh_int8", PARAMS, q4_input_params(op, x))
