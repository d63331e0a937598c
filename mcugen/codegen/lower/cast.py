"""CAST between the integer types int8, int16, int32 and uint32 (TFLM's cast.cc: static_cast).

As TFLM's CastPrepare/Eval: 1 input, 1 output, of one element count (MatchingFlatSize). TFLM also
casts from and to float32 and from bool; mcugen implements the integer pairs only. Quantization is
ignored, as TFLM ignores it.
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, check_operands, invalid, out, req
from mcugen.model.ir import Graph, Operator

TYPES = ("int8", "int16", "int32", "uint32")


@register("CAST", types=TYPES)
def lower_cast(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (1,))
    x, y = req(graph, op, 0), out(graph, op)
    check_dtype(op, x, *TYPES)
    check_dtype(op, y, *TYPES)
    if x.num_elements != y.num_elements:
        raise invalid(op, f"input shape {x.shape} and output shape {y.shape} differ in size")
    return Lowered("cast", "mcu_cast_int")
