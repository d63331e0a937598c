"""A stage's tiles along one axis, and what each grid of them costs: MACs and the live bytes of
one tile's buffers (MCUNetV2, Lin et al., NeurIPS 2021, section 3; generalised to sub-graphs).

Steps, for the operators of a stage (in the order they run) and one split count p of an axis:
1. Split the end's extent into p near-equal spans, the larger ones last.
2. For each span, walk the operators backwards: the end's output span is the tile; any other
   operator's output span is the hull of what its readers after it read (`receptive_span` of
   their own output spans); each operator reads the receptive field of its output span, clipped
   to its input, the part beyond a border being padding. The walk is done once per stage end
   for its longest candidate: a shorter stage with the same end is a suffix (its operators'
   readers are all inside it), so its spans are a slice.
3. Summarise the p tiles per operator (`AxisSummary`): the largest and total output extent, the
   largest read extent, whether every tile reads its inputs whole, which inputs some tile reads
   less of than their producer's tile holds (a crop).
4. Every grid (p rows x q cols) of a stage at once (`grid_costs`, numpy over p and q): MACs,
   and the largest live set of one tile's buffers in stage order (output tiles still to be read,
   plus the operator's own loaded windows of stage inputs and crops).
Complexity: O(p x (operators + inputs)) per axis, split count and end; O(8 x 8 x (operators +
inputs)) array work per stage. Weaknesses: a tile's buffers are sized by the largest row span
times the largest column span (an upper bound for every tile); the live set ignores in-place
sharing inside a tile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mcugen.plan.buffers import ARENA_ALIGNMENT
from mcugen.plan.patches.problem import AxisTile, SpatialOp, receptive_span


def split(size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` near-equal spans of [0, size), the larger ones last."""
    return [(size * i // parts, size * (i + 1) // parts) for i in range(parts)]


def axis_walk(ops: Sequence[SpatialOp], axis: int, parts: int) -> tuple[tuple[AxisTile, ...], int]:
    """The spans of operators `ops[k:]` for each of `parts` tiles of the end's `axis`, and k: the
    first operator from which every one has a reader after it and reads something besides
    padding in every tile (spans before k are placeholders)."""
    producer = {op.output: j for j, op in enumerate(ops)}
    valid_from = 0
    tiles = []
    for tile in split(ops[-1].out_hw[axis], parts):
        need: dict[int, tuple[int, int]] = {ops[-1].output: tile}
        spans: list[tuple[int, ...]] = []
        for j in range(len(ops) - 1, -1, -1):
            op = ops[j]
            out = need.get(op.output)
            lo, hi, before, after = (0, 0, 0, 0)
            if out is not None:
                lo, hi, before, after = receptive_span(op.window, axis, op.in_hw[axis], *out)
            if out is None or hi <= lo:
                valid_from = max(valid_from, j + 1)
                spans.extend([(0, 0, 0, 0, 0, 0)] * (j + 1))
                break
            spans.append((lo, hi, before, after, *out))
            for x in op.inputs:
                if x in producer:
                    had = need.get(x, (lo, hi))
                    need[x] = (min(had[0], lo), max(had[1], hi))
        columns = list(zip(*reversed(spans), strict=True))
        tiles.append(AxisTile(*(tuple(c) for c in columns)))
    return tuple(tiles), valid_from


def axis_tiles(ops: Sequence[SpatialOp], axis: int, parts: int) -> tuple[AxisTile, ...] | None:
    """`axis_walk`'s tiles when every operator of `ops` is valid, else None."""
    tiles, valid_from = axis_walk(ops, axis, parts)
    return tiles if valid_from == 0 else None


def suffix(tiles: Sequence[AxisTile], k: int) -> tuple[AxisTile, ...]:
    """The tiles of the operators from the k-th on."""
    return tuple(
        AxisTile(t.lo[k:], t.hi[k:], t.pad_before[k:], t.pad_after[k:], t.out_lo[k:], t.out_hi[k:])
        for t in tiles
    )


@dataclass(frozen=True)
class AxisSummary:
    """What a grid needs of one axis's tiles, per operator (stage order)."""

    out_max: tuple[int, ...]  # largest output extent over the tiles
    out_sum: tuple[int, ...]  # total output extent (MACs)
    in_max: tuple[int, ...]  # largest read extent
    reads_whole: tuple[bool, ...]  # every tile reads the inputs' whole extent
    #: inputs made by an earlier operator of which some tile reads less than its tile holds
    crops: tuple[frozenset[int], ...]


def summarise(ops: Sequence[SpatialOp], axis: int, tiles: Sequence[AxisTile]) -> AxisSummary:
    """`AxisSummary` of `tiles`. O(tiles x (operators + inputs))."""
    producer = {op.output: j for j, op in enumerate(ops)}
    n = range(len(ops))
    return AxisSummary(
        tuple(max(t.out_hi[j] - t.out_lo[j] for t in tiles) for j in n),
        tuple(sum(t.out_hi[j] - t.out_lo[j] for t in tiles) for j in n),
        tuple(max(t.hi[j] - t.lo[j] for t in tiles) for j in n),
        tuple(all((t.lo[j], t.hi[j]) == (0, ops[j].in_hw[axis]) for t in tiles) for j in n),
        tuple(
            frozenset(
                x
                for x in ops[j].inputs
                if x in producer
                and any(
                    (t.lo[j], t.hi[j]) != (t.out_lo[producer[x]], t.out_hi[producer[x]])
                    for t in tiles
                )
            )
            for j in n
        ),
    )


@dataclass(frozen=True)
class GridCosts:
    """MACs and tile live peak of every grid: `macs[a, b]` for rows `parts_rows[a]` and cols
    `parts_cols[b]`."""

    parts_rows: tuple[int, ...]
    parts_cols: tuple[int, ...]
    macs: np.ndarray
    peak: np.ndarray


def grid_costs(
    ops: Sequence[SpatialOp],
    k: int,
    rows: Mapping[int, AxisSummary],
    cols: Mapping[int, AxisSummary],
) -> GridCosts:
    """Costs of the stage `ops[k:]` for every split count in `rows` x `cols` (summaries of the
    walk over all of `ops`). An input made before `ops[k]` is a stage input: loaded unless every
    tile reads it whole; one made from `ops[k]` on is cropped where some tile reads less."""
    stage = ops[k:]
    pr, pc = tuple(sorted(rows)), tuple(sorted(cols))

    def table(
        summaries: Mapping[int, AxisSummary], parts: tuple[int, ...], name: str
    ) -> np.ndarray:
        return np.array([getattr(summaries[p], name)[k:] for p in parts], dtype=np.int64)

    r_out, c_out = table(rows, pr, "out_max"), table(cols, pc, "out_max")
    r_in, c_in = table(rows, pr, "in_max"), table(cols, pc, "in_max")
    taps = np.array([op.out_channels * op.window.macs_per_output for op in stage], dtype=np.int64)
    macs = np.einsum("aj,bj,j->ab", table(rows, pr, "out_sum"), table(cols, pc, "out_sum"), taps)
    pixel = np.array([op.out_pixel_bytes for op in stage], dtype=np.int64)
    out_bytes = _align(r_out[:, None, :] * c_out[None, :, :] * pixel)  # (rows, cols, ops)
    made = {op.output: j for j, op in enumerate(stage)}
    alive = np.zeros((len(stage), len(stage)), dtype=np.int64)  # [reader step, producer]
    for j, op in enumerate(stage):
        alive[j, j] = 1
        for x in op.inputs:
            if x in made:
                alive[made[x] : j + 1, made[x]] = 1
    live = out_bytes @ alive.T
    for j, op in enumerate(stage):
        whole = np.logical_and.outer(
            [rows[p].reads_whole[k + j] for p in pr], [cols[p].reads_whole[k + j] for p in pc]
        )
        for x, bytes_per_pixel in dict(zip(op.inputs, op.in_pixel_bytes, strict=True)).items():
            if x in made:
                wanted = np.logical_or.outer(
                    [x in rows[p].crops[k + j] for p in pr], [x in cols[p].crops[k + j] for p in pc]
                )
            else:
                wanted = ~whole
            area = r_in[:, None, j] * c_in[None, :, j] * bytes_per_pixel
            live[:, :, j] += _align(area) * wanted
    return GridCosts(pr, pc, macs, live.max(axis=2))


def _align(n: np.ndarray) -> np.ndarray:
    return (n + ARENA_ALIGNMENT - 1) // ARENA_ALIGNMENT * ARENA_ALIGNMENT
