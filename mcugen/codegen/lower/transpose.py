"""TRANSPOSE with a constant permutation, as TFLM's reference kernel (ranks 1 to 5)."""

from __future__ import annotations

from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import check_dtype, req, same_type_operands, unsupported
from mcugen.model.ir import Graph, Operator, element_size

PARAMS = "mcu_transpose_params_t"
TYPES = ("float32", "int8", "int16")
MAX_DIMS = 5


def constant_perm(graph: Graph, op: Operator, rank: int) -> tuple[int, ...]:
    """The constant int32 permutation, checked as TFLM's TransposePrepare (plus uniqueness)."""
    perm_tensor = req(graph, op, 1)
    if not perm_tensor.is_constant:
        raise unsupported(op, "a non-constant permutation is not supported")
    check_dtype(op, perm_tensor, "int32")
    if perm_tensor.shape != (rank,):
        raise unsupported(op, f"permutation shape {perm_tensor.shape} does not fit rank {rank}")
    perm = tuple(int(v) for v in perm_tensor.array())
    if sorted(perm) != list(range(rank)):
        raise unsupported(op, f"{perm} is not a permutation of the {rank} axes")
    return perm


@register("TRANSPOSE", types=TYPES)
def lower_transpose(graph: Graph, op: Operator) -> Lowered:
    """Output axis d is input axis perm[d]."""
    x, y = same_type_operands(graph, op, 2, TYPES)
    rank = len(x.shape)
    if not 1 <= rank <= MAX_DIMS:
        raise unsupported(op, f"input rank {rank} is not supported (TFLM: 1 to {MAX_DIMS})")
    perm = constant_perm(graph, op, rank)
    expected = tuple(x.shape[a] for a in perm)
    if y.shape != expected:
        raise unsupported(op, f"output shape {y.shape} is not the transposed shape {expected}")
    params = (("elem_bytes", element_size(x.dtype)), ("perm", Array("int32_t", perm)))
    return Lowered("transpose", "mcu_transpose", PARAMS, params)
