"""SHAPE: the input's static shape, stored as a constant the kernel copies (int32 output only)."""

from __future__ import annotations

from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import ANY_TYPE, out, req, unsupported
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_shape_params_t"


@register("SHAPE", types=ANY_TYPE)
def lower_shape(graph: Graph, op: Operator) -> Lowered:
    """TFLM's SHAPE writes int32 only; an int64 `out_type` is rejected as TFLM rejects it."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise unsupported(op, "expects 1 input and 1 output")
    x, y = req(graph, op, 0), out(graph, op)
    if y.dtype != "int32":
        raise unsupported(op, f"output type {y.dtype} is not supported (TFLM writes int32 only)")
    if y.num_elements != len(x.shape):
        raise unsupported(op, f"output shape {y.shape} cannot hold the rank-{len(x.shape)} shape")
    values = Array("int32_t", tuple(int(d) for d in x.shape))
    return Lowered("shape", "mcu_shape_i32", PARAMS, (("count", len(x.shape)), ("values", values)))
