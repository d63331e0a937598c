"""SPLIT and SPLIT_V: consecutive slabs of the input along an axis, one per output.

TFLM reads only the constant axis; the output shapes give the split sizes (SPLIT_V's size_splits,
-1 included, is resolved by the converter into those shapes). TFLM's SPLIT sizes every output like
output 0, so SPLIT requires equal parts.
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, check_parts, out, req, unsupported
from mcugen.model.ir import Graph, Operator, Tensor, element_size

PARAMS = "mcu_split_params_t"
TYPES = ("float32", "int8", "int16", "int32")


def constant_axis(op: Operator, axis_tensor: Tensor, rank: int) -> int:
    """The first value of the constant int32 axis input, made non-negative."""
    if not axis_tensor.is_constant:
        raise unsupported(op, "a non-constant axis is not supported")
    check_dtype(op, axis_tensor, "int32")
    if axis_tensor.num_elements < 1:
        raise unsupported(op, "the axis input is empty")
    raw = int(axis_tensor.array().reshape(-1)[0])
    axis = raw + rank if raw < 0 else raw
    if not 0 <= axis < rank:
        raise unsupported(op, f"axis {raw} is out of range for rank {rank}")
    return axis


def lower_split_common(
    graph: Graph, op: Operator, data: int, axis_input: int, equal_parts: bool
) -> Lowered:
    """Shared checks; `data` and `axis_input` are the operand positions of the two inputs."""
    x = req(graph, op, data)
    check_dtype(op, x, *TYPES)
    outputs = [out(graph, op, i) for i in range(len(op.outputs))]
    if not outputs:
        raise unsupported(op, "has no outputs")
    axis = constant_axis(op, req(graph, op, axis_input), len(x.shape))
    check_parts(op, outputs, x, axis, "output", x.dtype)
    widths = sorted({y.shape[axis] for y in outputs})
    if equal_parts and len(widths) != 1:
        raise unsupported(op, f"outputs have unequal sizes {widths} along the axis")
    params = (("axis", axis), ("elem_bytes", element_size(x.dtype)), ("data_input", data))
    return Lowered("split", "mcu_split", PARAMS, params)


@register("SPLIT", types=TYPES, data_input=1)
def lower_split(graph: Graph, op: Operator) -> Lowered:
    """Inputs (axis, data); every output as wide as output 0 along the axis (TFLM's SplitImpl)."""
    if len(op.inputs) != 2:
        raise unsupported(op, f"expects 2 inputs, got {len(op.inputs)}")
    return lower_split_common(graph, op, data=1, axis_input=0, equal_parts=True)


@register("SPLIT_V", types=TYPES)
def lower_split_v(graph: Graph, op: Operator) -> Lowered:
    """Inputs (data, size_splits, axis); TFLM requires exactly three."""
    if len(op.inputs) != 3:
        raise unsupported(op, f"expects 3 inputs, got {len(op.inputs)}")
    return lower_split_common(graph, op, data=0, axis_input=2, equal_parts=False)
