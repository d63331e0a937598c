"""PACK: N inputs of one shape stacked along a new output axis, as TFLM's pack kernel."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, invalid, out, req, unsupported
from mcugen.model.ir import Graph, Operator, element_size

PARAMS = "mcu_pack_params_t"
TYPES = ("float32", "int8", "int16", "int32", "int64")


@register("PACK", types=TYPES)
def lower_pack(graph: Graph, op: Operator) -> Lowered:
    """TFLM copies `values_count` inputs; a negative axis counts from the end of the output."""
    if len(op.outputs) != 1:
        raise invalid(op, f"has {len(op.outputs)} outputs; its kernel writes 1")
    y = out(graph, op)
    inputs = [req(graph, op, i) for i in range(len(op.inputs))]
    count = int(op.options.get("values_count", 0))
    if count != len(inputs) or count < 1:
        raise unsupported(op, f"values_count {count} differs from the {len(inputs)} inputs")
    check_dtype(op, y, *TYPES)
    shape = inputs[0].shape
    for x in inputs:
        check_dtype(op, x, y.dtype)
        if x.shape != shape:
            raise unsupported(op, f"input shapes {shape} and {x.shape} differ")
    raw = int(op.options.get("axis", 0))
    axis = raw + len(y.shape) if raw < 0 else raw
    if not 0 <= axis < len(y.shape):
        raise unsupported(op, f"axis {raw} is out of range for output rank {len(y.shape)}")
    expected = shape[:axis] + (count,) + shape[axis:]
    if y.shape != expected:
        raise unsupported(op, f"output shape {y.shape} is not the packed shape {expected}")
    params = (("axis", axis), ("elem_bytes", element_size(y.dtype)))
    return Lowered("pack", "mcu_pack", PARAMS, params)
