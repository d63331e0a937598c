"""MAXIMUM, MINIMUM: int8, int32 and float32, with numpy broadcasting.

TFLM has no Prepare for these: int8 compares raw values whatever the quantizations, so mcugen does
the same (converters give inputs and output one quantization, where raw and real order agree).
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import OVERWRITES_EITHER
from mcugen.codegen.lower.add import binary_operands
from mcugen.model.ir import Graph, Operator

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int32", "float32")

SUFFIX = {"int8": "int8", "int32": "int32", "float32": "f32"}


@register("MAXIMUM", "MINIMUM", traits=OVERWRITES_EITHER, types=TYPES)
def lower_maximum_minimum(graph: Graph, op: Operator) -> Lowered:
    _, _, _, dtype = binary_operands(graph, op, *TYPES)
    function = f"mcu_{op.opcode.lower()}_{SUFFIX[dtype]}"
    return Lowered("maximum_minimum", function)
