"""Rules of the operators that place their inputs in a larger output: PAD, PADV2 and
CONCATENATION. The gradient of each input is its block of dy, cut out with the builtin
STRIDED_SLICE (a copy, exact)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mcugen.errors import UnsupportedError
from mcugen.model.ir import Operator
from mcugen.train.rules import GradContext, gradient

#: STRIDED_SLICE's rank limit (mcugen/codegen/lower/strided_slice.py, TFLM's kMaxDim).
MAX_SLICE_DIMS = 4


def slice_into(ctx: GradContext, src: int, begin: Sequence[int], dst: int) -> None:
    """dst = src[begin : begin + dst's shape], stride 1 on every axis."""
    size = ctx.b.tensors[dst].shape
    start = np.array(begin, dtype=np.int32)
    stop = start + np.array(size, dtype=np.int32)
    ones = np.ones(len(size), dtype=np.int32)
    inputs = [src] + [
        ctx.constant(v, f"grad_slice_{k}")
        for k, v in (("begin", start), ("end", stop), ("strides", ones))
    ]
    ctx.builtin("STRIDED_SLICE", inputs, [dst])


def reshaped(ctx: GradContext, src: int, shape: Sequence[int], dst: int | None = None) -> int:
    """A RESHAPE of `src` to `shape` (into `dst`, or a new float32 tensor); returns its output."""
    if dst is None:
        dst = ctx.b.tensor(shape, "float32", f"{ctx.b.tensors[src].name}/reshaped")
    ctx.builtin(
        "RESHAPE", [src, ctx.constant(np.array(shape, dtype=np.int32), "grad_shape")], [dst]
    )
    return dst


def add_to(ctx: GradContext, result: dict[int, int], x: int, g: int) -> None:
    """result[x] = g, or the sum with the gradient it already has (an input read twice)."""
    if x in result:
        total = ctx.grad_like(x)
        ctx.builtin("ADD", [result[x], g], [total])
        g = total
    result[x] = g


@gradient("PAD", "PADV2")
def _pad(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    """dx = the interior of dy: dy[before : before + x's shape]."""
    dy, x = dys[0], op.inputs[0]
    assert dy is not None
    if len(op.inputs) > 2 and ctx.needs_grad(op.inputs[2]):
        raise UnsupportedError("training a computed PADV2 pad value is not supported yet")
    if not ctx.needs_grad(x):
        return {}
    shape = ctx.b.tensors[x].shape
    if len(shape) > MAX_SLICE_DIMS:
        raise UnsupportedError(
            f"training through a PAD of rank {len(shape)} is not supported yet "
            f"(at most {MAX_SLICE_DIMS})"
        )
    paddings = ctx.b.tensors[op.inputs[1]]
    if not paddings.is_constant:
        raise UnsupportedError("training through a PAD needs constant paddings")
    before = [int(v) for v in paddings.array().reshape(-1, 2)[:, 0]]
    dx = ctx.grad_like(x)
    slice_into(ctx, dy, before, dx)
    return {x: dx}


@gradient("CONCATENATION")
def _concatenation(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    """dy seen as [outer, axis, inner] (a RESHAPE, any rank), each input's rows of the axis
    sliced out and reshaped to the input's shape."""
    dy = dys[0]
    assert dy is not None
    needed = [x for x in op.inputs if ctx.needs_grad(x)]
    if not needed:
        return {}
    dz = ctx.through_activation(op, dy)
    shape = ctx.b.tensors[op.outputs[0]].shape
    axis = int(op.options.get("axis", 0))
    axis = axis + len(shape) if axis < 0 else axis
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    flat = reshaped(ctx, dz, (outer, shape[axis], inner))
    result: dict[int, int] = {}
    offset = 0
    for x in op.inputs:
        rows = ctx.b.tensors[x].shape[axis]
        if ctx.needs_grad(x):
            part = ctx.b.tensor((outer, rows, inner), "float32", f"{ctx.b.tensors[x].name}/grad3")
            slice_into(ctx, flat, (0, offset, 0), part)
            add_to(ctx, result, x, reshaped(ctx, part, ctx.b.tensors[x].shape, ctx.grad_like(x)))
        offset += rows
    return result
