"""RESHAPE, SQUEEZE and EXPAND_DIMS: one byte-copy kernel; the output's static shape is the result.

TFLM takes the output shape from the model (the shape input and `new_shape` option are not read at
run time), so the lowerings only check what TFLM's Prepare checks and reject what it rejects.
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import ANY_TYPE, VIEW, check_dtype, out, req, unsupported
from mcugen.model.ir import Graph, Operator, Tensor

COPY = Lowered("reshape", "mcu_reshape")
#: TFLM's SQUEEZE handles inputs of at most this rank.
MAX_SQUEEZE_DIMS = 8
#: Element types TFLM's EXPAND_DIMS Eval copies.
EXPAND_DIMS_TYPES = ("float32", "int8", "int16")


def _io(graph: Graph, op: Operator, num_inputs: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    """Input 0 and output 0, after checking the operand counts and that the types agree."""
    if len(op.inputs) not in num_inputs or len(op.outputs) != 1:
        raise unsupported(
            op,
            f"expects {' or '.join(map(str, num_inputs))} inputs and 1 output, "
            f"got {len(op.inputs)} and {len(op.outputs)}",
        )
    x, y = req(graph, op, 0), out(graph, op)
    check_dtype(op, y, x.dtype)
    return x, y


@register("RESHAPE", traits=VIEW, types=ANY_TYPE)
def lower_reshape(graph: Graph, op: Operator) -> Lowered:
    """A copy; element counts must match (TFLM's Prepare)."""
    x, y = _io(graph, op, (1, 2))
    if len(op.inputs) == 1 and y.shape == (0,):
        raise unsupported(op, "the legacy scalar output shape [0] is not supported")
    if x.num_elements != y.num_elements:
        raise unsupported(op, f"input shape {x.shape} and output shape {y.shape} differ in size")
    return COPY


def squeezed_shape(op: Operator, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The input shape without the squeezed axes, checked as TFLM's SqueezePrepare does."""
    rank = len(shape)
    if rank > MAX_SQUEEZE_DIMS:
        raise unsupported(op, f"input rank {rank} exceeds {MAX_SQUEEZE_DIMS}")
    dims = tuple(op.options.get("squeeze_dims", ()))
    if not dims:
        return tuple(d for d in shape if d != 1)
    drop = set()
    for d in dims:
        axis = d + rank if d < 0 else d
        if not 0 <= axis < rank or shape[axis] != 1:
            raise unsupported(op, f"squeeze axis {d} is not a size-1 axis of shape {shape}")
        drop.add(axis)
    return tuple(n for i, n in enumerate(shape) if i not in drop)


@register("SQUEEZE", traits=VIEW, types=ANY_TYPE)
def lower_squeeze(graph: Graph, op: Operator) -> Lowered:
    """A copy; the squeezed axes must exist and have size 1."""
    x, y = _io(graph, op, (1,))
    expected = squeezed_shape(op, x.shape)
    if y.shape != expected:
        raise unsupported(op, f"output shape {y.shape} is not the squeezed shape {expected}")
    return COPY


def expand_axis(op: Operator, axis_tensor: Tensor, rank: int) -> int:
    """The non-negative position of the new axis, from the constant int32 axis input."""
    if not axis_tensor.is_constant:
        raise unsupported(op, "a non-constant axis is not supported")
    check_dtype(op, axis_tensor, "int32")
    if len(axis_tensor.shape) > 1 or axis_tensor.num_elements < 1:
        raise unsupported(op, f"the axis must hold one value, got shape {axis_tensor.shape}")
    axis = int(axis_tensor.array().reshape(-1)[0])
    position = axis + rank + 1 if axis < 0 else axis
    if not 0 <= position <= rank:
        raise unsupported(op, f"axis {axis} is out of range for an input of rank {rank}")
    return position


@register("EXPAND_DIMS", traits=VIEW, types=EXPAND_DIMS_TYPES)
def lower_expand_dims(graph: Graph, op: Operator) -> Lowered:
    """A copy; the output shape must be the input's with a 1 at the axis."""
    x, y = _io(graph, op, (2,))
    check_dtype(op, x, *EXPAND_DIMS_TYPES)
    position = expand_axis(op, req(graph, op, 1), len(x.shape))
    expected = x.shape[:position] + (1,) + x.shape[position:]
    if y.shape != expected:
        raise unsupported(op, f"output shape {y.shape} is not the expanded shape {expected}")
    return COPY
