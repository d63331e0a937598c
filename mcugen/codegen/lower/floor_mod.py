"""FLOOR_MOD: float32 with numpy broadcasting (TFLM micro/kernels/floor_mod.cc supports no other
type)."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import OVERWRITES_EITHER
from mcugen.codegen.lower.add import binary_operands
from mcugen.model.ir import Graph, Operator


@register("FLOOR_MOD", traits=OVERWRITES_EITHER, types=("float32",))
def lower_floor_mod(graph: Graph, op: Operator) -> Lowered:
    """Element i of the output reads element i of a non-broadcast operand and nothing else of
    it, as ADD's kernel: either operand may be overwritten."""
    binary_operands(graph, op, "float32")
    return Lowered("floor_mod", "mcu_floor_mod_f32")
