"""TANH: float32 and int8 (TFLM's gemmlowp fixed-point path, output as scale 1/128 zp 0)."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import OVERWRITES_INPUT
from mcugen.codegen.lower.activations import unary_operands
from mcugen.codegen.lower.logistic import q4_input_params
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_tanh_params_t"


@register("TANH", traits=OVERWRITES_INPUT)
def lower_tanh(graph: Graph, op: Operator) -> Lowered:
    """float32: tanhf; int8: fixed point. Like TFLM, the int8 output's quantization is not read:
    the kernel always produces scale 1/128, zero point 0 (what converters emit)."""
    x, y, dtype = unary_operands(graph, op, "float32", "int8")
    if dtype == "float32":
        return Lowered("tanh", "mcu_tanh_f32", PARAMS)
    return Lowered("tanh", "mcu_tanh_int8", PARAMS, q4_input_params(op, x))
