"""Patch stages as a graph rewrite (codegen only): a stage of spatially local operators (a chain
or a sub-graph with branches, residual ADDs and channel concatenations) becomes one copy of the
stage per tile of a grid over its end tensor, bit-exact by construction.

Each tile's copy of an operator is the same operator (same weights, quantization, kernel) on
tensors of the tile's shape: its input tensor holds exactly the input rows and columns its
outputs read, clipped to the image, and the padding the tile still needs (only at the image's
true borders) is the operator's explicit (top, left, bottom, right) padding
(`EXPLICIT_PADDING`, which the convolution, depthwise and pooling kernels take). The kernels
skip taps outside their input, so each output pixel sums exactly the taps it sums in the whole
operator, in the same order: the same bits. Element-wise operators of several inputs (ADD, MUL,
CONCATENATION along channels) run on tiles of the same box of each input. The stage's inputs
stay whole; `McugenTileLoad` copies each tile's window out of them (unless a tile reads all of
one), or crops a tile made in the stage when a reader needs less than it holds (its producer
computed the hull of its readers' needs), and `McugenTileStore`
writes each tile into the whole end tensor, one store after the other over the same bytes
(the planner runs them in place, plan/aliasing.py step 2). All tile operators take the place
of the stage's first operator in the order given (the whole graph's plan), tile by tile,
row-major.

Why per-tile tensors rather than kernels with a window entry point: the reference kernels (the
oracle) and their optimised variants stay untouched, every tile buffer is planned, shared and
laid out by the existing planners, and the geometry is const data (tensor shapes and paddings)
like every other operator's. The cost is flash: one node, parameter block and tensor entry per
tile and operator (identical constant arrays are emitted once, codegen/viewmodel.py).

Complexity O(tiles x stage operators + tensors). The rewritten graph holds mcugen's own custom
operators and explicit paddings: `tflite_write` refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Protocol

from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.rewrite import EXPLICIT_PADDING, rebuild

TILE_LOAD = "McugenTileLoad"
TILE_STORE = "McugenTileStore"


class AxisSpans(Protocol):
    """One tile's spans along one axis, per stage operator (plan/patches AxisTile)."""

    @property
    def lo(self) -> tuple[int, ...]: ...
    @property
    def hi(self) -> tuple[int, ...]: ...
    @property
    def pad_before(self) -> tuple[int, ...]: ...
    @property
    def pad_after(self) -> tuple[int, ...]: ...
    @property
    def out_lo(self) -> tuple[int, ...]: ...
    @property
    def out_hi(self) -> tuple[int, ...]: ...


def _custom(code: str, inputs: tuple[int, ...], output: int, y: int, x: int) -> Operator:
    return Operator(
        index=-1,
        opcode="CUSTOM",
        version=1,
        inputs=inputs,
        outputs=(output,),
        options=MappingProxyType({"y": y, "x": x}),
        custom_code=code,
    )


class _Tensors:
    """The graph's tensors plus the tiles' new ones."""

    def __init__(self, graph: Graph) -> None:
        self.items: list[Tensor] = list(graph.tensors)

    def like(self, t: int, hw: tuple[int, int], suffix: str) -> int:
        base = self.items[t]
        shape = (1, hw[0], hw[1], base.shape[3])
        self.items.append(
            replace(base, index=len(self.items), name=f"{base.name}/{suffix}", shape=shape)
        )
        return len(self.items) - 1


def tile_stage(
    graph: Graph,
    ops: Sequence[int],
    rows: Sequence[AxisSpans],
    cols: Sequence[AxisSpans],
    order: Sequence[int] | None = None,
) -> Graph:
    """`graph` with the stage `ops` (operator indices in the order they run; the last one's
    output is the end) run tile by tile over the grid rows x cols of its end tensor (module
    docstring). The other operators keep `order` (default: the stored one), which becomes the
    new graph's stored order; the tiles take the place of the stage's first operator in it."""
    tensors = _Tensors(graph)
    stage = [graph.operators[i] for i in ops]
    end = stage[-1].outputs[0]
    end_hw = (graph.tensors[end].shape[1], graph.tensors[end].shape[2])
    tiled: list[Operator] = []
    whole_so_far = -1
    last = len(rows) * len(cols) - 1
    for t, (r, c) in enumerate((r, c) for r in rows for c in cols):
        current = _one_tile(graph, stage, r, c, tensors, tiled, t)
        whole = end if t == last else tensors.like(end, end_hw, f"part{t}")
        store = _custom(TILE_STORE, (whole_so_far, current), whole, r.out_lo[-1], c.out_lo[-1])
        tiled.append(store)
        whole_so_far = whole
    sequence = list(order if order is not None else range(len(graph.operators)))
    at = min(sequence.index(i) for i in ops)
    stage_ops = set(ops)
    before = [graph.operators[i] for i in sequence[:at] if i not in stage_ops]
    after = [graph.operators[i] for i in sequence[at:] if i not in stage_ops]
    return rebuild(graph, tensors.items, [*before, *tiled, *after])


def _one_tile(
    graph: Graph,
    stage: Sequence[Operator],
    r: AxisSpans,
    c: AxisSpans,
    tensors: _Tensors,
    tiled: list[Operator],
    t: int,
) -> int:
    """Append tile `t`'s operators to `tiled`; its end tile tensor. Each operator reads, from
    every non-constant input, the span [lo, hi) of its rows and columns: the tensor itself when
    that is all of it (a stage input) or exactly what its producer's tile holds, else a
    `McugenTileLoad` of that window (from the whole stage input, or a crop of the producer's
    tile at the offset relative to it)."""
    made: dict[int, tuple[int, int, int]] = {}  # tensor -> (tile tensor, row, column of its box)
    current = -1
    for j, op in enumerate(stage):
        box = (r.lo[j], c.lo[j], r.hi[j] - r.lo[j], c.hi[j] - c.lo[j])
        reads: dict[int, int] = {}
        for x in op.inputs:
            if x < 0 or x in reads or graph.tensors[x].is_constant:
                continue
            source, y0, x0 = made.get(x, (x, 0, 0))
            shape = tensors.items[source].shape
            if (box[0] - y0, box[1] - x0, *box[2:]) == (0, 0, shape[1], shape[2]):
                reads[x] = source
                continue
            reads[x] = tensors.like(x, box[2:], f"tile{t}/read{j}")
            tiled.append(_custom(TILE_LOAD, (source,), reads[x], box[0] - y0, box[1] - x0))
        hw = (r.out_hi[j] - r.out_lo[j], c.out_hi[j] - c.out_lo[j])
        current = tensors.like(op.outputs[0], hw, f"tile{t}")
        made[op.outputs[0]] = (current, r.out_lo[j], c.out_lo[j])
        pads = (r.pad_before[j], c.pad_before[j], r.pad_after[j], c.pad_after[j])
        tiled.append(_tile_op(op, reads, current, pads))
    return current


def _tile_op(
    op: Operator, reads: dict[int, int], y: int, pads: tuple[int, int, int, int]
) -> Operator:
    """One tile's copy of `op` reading `reads` (tensor -> its tile) to tensor `y`; a windowed
    operator (one with a padding option) gets the tile's explicit padding."""
    options: dict[str, Any] = dict(op.options)
    if "padding" in options or EXPLICIT_PADDING in options:
        options[EXPLICIT_PADDING] = pads
    inputs = tuple(reads.get(x, x) for x in op.inputs)
    return replace(op, inputs=inputs, outputs=(y,), options=MappingProxyType(options))
