"""STRIDED_SLICE with constant begin/end/strides, resolved at build time as TFLM resolves them.

TFLM checks the output shape in Prepare with one set of helpers (strided_slice_logic.h StartForAxis
and StopForAxis, and a float32 ceil) and walks the input in Eval with another
(StridedSliceStartForAxis / StridedSliceEndForAxis). Both are reproduced: the first to reject what
TFLM's Prepare rejects, the second to give the kernel its per-axis start, stride and count.
Where the two disagree (a shrunk axis with a negative stride or an index past the end), TFLM leaves
part of the output unwritten; that is rejected here.

TFLM ignores ellipsis_mask, new_axis_mask and offset (it zeroes them); a model that sets them means
something TFLM does not compute, so they are rejected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import check_dtype, req, same_type_operands, unsupported
from mcugen.model.ir import Graph, Operator, Tensor, element_size

PARAMS = "mcu_strided_slice_params_t"
TYPES = ("float32", "int8", "int16", "int32", "bool")
MAX_DIMS = 4  # TFLM's kMaxDim
INT_LOWEST, INT_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class SliceSpec:
    """The operator's constant indices and masks."""

    begin: tuple[int, ...]
    end: tuple[int, ...]
    strides: tuple[int, ...]
    begin_mask: int
    end_mask: int
    shrink_mask: int

    def masked(self, mask: int, axis: int) -> bool:
        return bool(mask & (1 << axis))


def clamp(v: int, lo: int, hi: int) -> int:
    return hi if hi < v else (lo if v < lo else v)


def clamp_for_stride(v: int, stride: int, size: int) -> int:
    """[0, size] for forward strides, [-1, size - 1] for backward ones."""
    return clamp(v, 0, size) if stride > 0 else clamp(v, -1, size - 1)


def eval_start(spec: SliceSpec, size: int, axis: int) -> int:
    """StridedSliceStartForAxis (Eval): wrap, clamp, then the begin mask."""
    stride = spec.strides[axis]
    start = spec.begin[axis]
    start = clamp_for_stride(start + size if start < 0 else start, stride, size)
    if spec.masked(spec.begin_mask, axis):
        start = 0 if stride > 0 else size - 1
    return start


def eval_stop(spec: SliceSpec, size: int, axis: int, start: int) -> int:
    """StridedSliceEndForAxis (Eval): a shrunk axis takes one index unless start is past the end."""
    if spec.masked(spec.shrink_mask, axis):
        return start if start >= size else start + 1
    stride = spec.strides[axis]
    stop = spec.end[axis]
    stop = clamp_for_stride(stop + size if stop < 0 else stop, stride, size)
    if spec.masked(spec.end_mask, axis):
        stop = size if stride > 0 else -1
    return stop


def eval_count(start: int, stop: int, stride: int) -> int:
    """Iterations of `for (i = start; stride > 0 ? i < stop : i > stop; i += stride)`."""
    span = stop - start if stride > 0 else start - stop
    return max(0, -(-span // abs(stride)))


def prepare_extent(spec: SliceSpec, size: int, axis: int) -> int:
    """CheckOutputSize's dim_shape: StartForAxis/StopForAxis, then ceil in float32."""
    stride = spec.strides[axis]
    if size == 0:
        begin = end = 0
    else:
        begin = spec.begin[axis]
        if spec.masked(spec.begin_mask, axis):
            begin = INT_LOWEST if stride > 0 else INT_MAX
        begin = clamp_for_stride(begin + size if begin < 0 else begin, stride, size)
        end = spec.end[axis]
        if spec.masked(spec.end_mask, axis):
            end = INT_MAX if stride > 0 else INT_LOWEST
        end = clamp_for_stride(end + size if end < 0 else end, stride, size)
    if spec.masked(spec.shrink_mask, axis):
        end = begin + 1
    extent = math.ceil(float(np.float32(end - begin) / np.float32(stride)))
    return max(extent, 0)


def check_output_shape(
    op: Operator, spec: SliceSpec, shape: tuple[int, ...], out_shape: tuple[int, ...]
) -> None:
    """TFLM's CheckOutputSize: non-shrunk axes, in order, are the output dims."""
    expected = tuple(
        prepare_extent(spec, size, axis)
        for axis, size in enumerate(shape)
        if not spec.masked(spec.shrink_mask, axis)
    )
    if expected != out_shape:
        raise unsupported(op, f"output shape {out_shape} is not the sliced shape {expected}")


def constant_indices(op: Operator, t: Tensor, rank: int, what: str) -> tuple[int, ...]:
    """A constant int32 vector with one entry per input axis."""
    if not t.is_constant:
        raise unsupported(op, f"a non-constant {what} tensor is not supported")
    check_dtype(op, t, "int32")
    if t.num_elements != rank:
        raise unsupported(op, f"{what} has {t.num_elements} entries for an input of rank {rank}")
    return tuple(int(v) for v in t.array().reshape(-1))


def slice_spec(graph: Graph, op: Operator, rank: int) -> SliceSpec:
    """Read and check the constant inputs and the options."""
    o = op.options
    for name in ("ellipsis_mask", "new_axis_mask", "offset"):
        if o.get(name, 0):
            raise unsupported(op, f"{name} is not supported (TFLM ignores it)")
    begin, end, strides = (
        constant_indices(op, req(graph, op, i), rank, what)
        for i, what in ((1, "begin"), (2, "end"), (3, "strides"))
    )
    if 0 in strides:
        raise unsupported(op, "stride value has to be non-zero")
    return SliceSpec(
        begin,
        end,
        strides,
        int(o.get("begin_mask", 0)),
        int(o.get("end_mask", 0)),
        int(o.get("shrink_axis_mask", 0)),
    )


def walk(spec: SliceSpec, shape: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """Per input axis: Eval's first index (0 when nothing is taken) and its index count."""
    starts, counts = [], []
    for axis, size in enumerate(shape):
        start = eval_start(spec, size, axis)
        count = eval_count(start, eval_stop(spec, size, axis, start), spec.strides[axis])
        starts.append(start if count > 0 else 0)
        counts.append(count)
    return starts, counts


@register("STRIDED_SLICE", types=TYPES)
def lower_strided_slice(graph: Graph, op: Operator) -> Lowered:
    """Check as TFLM's Prepare, then pass Eval's per-axis walk to the kernel."""
    x, y = same_type_operands(graph, op, 4, TYPES)
    rank = len(x.shape)
    if rank > MAX_DIMS:
        raise unsupported(op, f"input rank {rank} exceeds {MAX_DIMS} (TFLM's limit)")
    spec = slice_spec(graph, op, rank)
    check_output_shape(op, spec, x.shape, y.shape)
    starts, counts = walk(spec, x.shape)
    if math.prod(counts) != y.num_elements:
        raise unsupported(
            op,
            f"TFLM would write {math.prod(counts)} of the {y.num_elements} "
            "output elements (shrunk axis with a negative stride or out of "
            "range)",
        )
    params = (
        ("ndims", rank),
        ("elem_bytes", element_size(x.dtype)),
        ("starts", Array("int32_t", tuple(starts))),
        ("strides", Array("int32_t", spec.strides)),
        ("counts", Array("int32_t", tuple(counts))),
    )
    return Lowered("strided_slice", "mcu_strided_slice", PARAMS, params)
