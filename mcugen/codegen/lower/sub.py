"""SUB: int8 and int16 (TFLM's left_shift 20 / 15 scheme) and float32, with numpy broadcasting."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import OVERWRITES_EITHER, activation_params
from mcugen.codegen.lower.add import binary_operands, quantized_add_sub
from mcugen.model.ir import Graph, Operator

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "float32")

PARAMS = "mcu_sub_params_t"


@register("SUB", traits=OVERWRITES_EITHER, types=TYPES)
def lower_sub(graph: Graph, op: Operator) -> Lowered:
    """Same rescale factors as ADD, in double: some TFLM sources compute them in float32, but the
    interpreter the tests compare with (pip tflite_micro) widens to double first, like ADD."""
    a, b, y, dtype = binary_operands(graph, op, *TYPES)
    if dtype == "float32":
        return Lowered("sub", "mcu_sub_f32", PARAMS, activation_params(op, y))
    return quantized_add_sub(op, a, b, y, "sub")
