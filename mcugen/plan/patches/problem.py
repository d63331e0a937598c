"""The plain data a patch-stage planner reads, and the plan it returns.

A *stage* is a chain of spatially local operators (each declares a `Window`, mcugen/model/
traits.py) from a tensor kept whole (its input) to a tensor kept whole (its end). Run patch by
patch over an n x m grid of the end tensor, each tile computes the receptive field it needs
through the chain into small per-tile buffers (halos recomputed, padding only at the image's true
borders) and writes its tile into the whole end tensor (MCUNetV2, Lin et al., NeurIPS 2021).

Geometry is separable: a tile's rows depend only on the tile row, its columns only on the tile
column, so each axis is computed once per (stage end, split count) and a tile is a pair of spans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mcugen.model.ir import Graph
from mcugen.model.traits import Traits, Window
from mcugen.plan.buffers import align_up, tensor_lifetimes


class PatchPlanInvalid(AssertionError):
    """A patch planner produced an inconsistent stage: a bug in mcugen, not a user error."""


@dataclass(frozen=True)
class SpatialOp:
    """One tileable operator: its tensors, extents and window (batch 1, NHWC)."""

    index: int
    input: int
    output: int
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    in_pixel_bytes: int  # channels x element size
    out_pixel_bytes: int
    out_channels: int
    window: Window


@dataclass(frozen=True)
class PatchProblem:
    """Chains of tileable operators and what the rest of the graph costs, as plain numbers."""

    ops: Mapping[int, SpatialOp]
    #: maximal chains (operator indices in data-flow order): each link's tensor has one reader
    #: and is no graph output; a chain starts at a tensor some other operator (or the caller)
    #: produces whole
    chains: tuple[tuple[int, ...], ...]
    total_macs: int
    #: operator -> step (1-based) in the order the rest of the graph is planned with
    step: Mapping[int, int]
    #: peak live bytes at each step of that plan (0 = before the first operator)
    step_live: tuple[int, ...]
    #: activation tensor -> (first step, last step, aligned bytes) in that order
    lifetimes: Mapping[int, tuple[int, int, int]]
    #: operators in no chain: their working set (inputs, outputs) bounds any patched plan
    fixed_working_set: int = 0


@dataclass(frozen=True)
class AxisTile:
    """One tile's extent along one axis, per operator of the stage (in chain order): the input
    span [lo, hi) it reads, the padding before/after it applies there (non-zero only at the
    image's borders), and the output span [out_lo, out_hi) it writes."""

    lo: tuple[int, ...]
    hi: tuple[int, ...]
    pad_before: tuple[int, ...]
    pad_after: tuple[int, ...]
    out_lo: tuple[int, ...]
    out_hi: tuple[int, ...]


@dataclass(frozen=True)
class PatchStage:
    """The chosen stage: operators in chain order, the grid of the end tensor, and per tile row
    (`rows`) and tile column (`cols`) the spans of every operator."""

    ops: tuple[int, ...]
    grid: tuple[int, int]
    rows: tuple[AxisTile, ...]
    cols: tuple[AxisTile, ...]
    macs: int  # of the stage run patch by patch
    macs_added: int  # over running it whole (recomputed halos)
    peak: int  # estimated bytes while it runs: input and end whole, the largest tile's buffers

    @property
    def tiles(self) -> int:
        return self.grid[0] * self.grid[1]


@dataclass(frozen=True)
class CurvePoint:
    """One evaluated (stage end, grid): the estimated arena and the MACs it adds."""

    end: int  # operator index of the stage's last operator
    grid: tuple[int, int]
    arena: int
    macs_added: int


@dataclass(frozen=True)
class PatchPlan:
    """A patch planner's answer: the stage (None: running whole is best or nothing is
    tileable), the estimated arena with and without it, and a lower bound."""

    stage: PatchStage | None
    strategy: str
    estimated_arena: int
    unpatched_arena: int
    total_macs: int
    budget: float  # MAC overhead allowed, as a fraction of the model's MACs
    lower_bound: int  # no single stage of this problem, any grid, gets the peak below this
    curve: tuple[CurvePoint, ...] = field(default=(), repr=False)  # the arena/MAC front
    runners_up: tuple[PatchStage, ...] = field(default=(), repr=False)  # the next candidates

    @property
    def overhead(self) -> float:
        if self.stage is None or not self.total_macs:
            return 0.0
        return self.stage.macs_added / self.total_macs

    def validate(self, problem: PatchProblem) -> None:
        """Raise `PatchPlanInvalid` unless the stage is a chain of the problem, its tiles
        partition the end tensor, every operator's spans cover exactly the receptive field of
        its output span (padding only beyond the input's borders) and chain output to input,
        and the MACs added stay within the budget."""
        stage = self.stage
        if stage is None:
            return
        if not any(_is_sub_chain(stage.ops, chain) for chain in problem.chains):
            raise PatchPlanInvalid(f"operators {stage.ops} are not a chain of the problem")
        if self.total_macs and stage.macs_added > self.budget * self.total_macs:
            raise PatchPlanInvalid(f"stage adds {stage.macs_added} MACs, over the budget")
        ops = [problem.ops[i] for i in stage.ops]
        for axis, tiles in ((0, stage.rows), (1, stage.cols)):
            _check_axis(ops, axis, tiles)


def _is_sub_chain(ops: Sequence[int], chain: Sequence[int]) -> bool:
    n = len(ops)
    return any(tuple(chain[k : k + n]) == tuple(ops) for k in range(len(chain) - n + 1))


def _check_axis(ops: Sequence[SpatialOp], axis: int, tiles: Sequence[AxisTile]) -> None:
    end = ops[-1].out_hw[axis]
    bounds = [(t.out_lo[-1], t.out_hi[-1]) for t in tiles]
    if (
        bounds[0][0] != 0
        or bounds[-1][1] != end
        or any(
            a[1] != b[0] or a[0] >= a[1]
            for a, b in zip(bounds, [*bounds[1:], (end, end + 1)], strict=True)
        )
    ):
        raise PatchPlanInvalid(f"tiles {bounds} do not partition axis {axis} of size {end}")
    for t in tiles:
        for j, op in enumerate(ops):
            if j and (t.lo[j], t.hi[j]) != (t.out_lo[j - 1], t.out_hi[j - 1]):
                raise PatchPlanInvalid(f"operator {op.index} reads another span than it gets")
            want = receptive_span(op.window, axis, op.in_hw[axis], t.out_lo[j], t.out_hi[j])
            got = (t.lo[j], t.hi[j], t.pad_before[j], t.pad_after[j])
            if want != got:
                raise PatchPlanInvalid(f"operator {op.index}: span {got}, receptive field {want}")


def receptive_span(
    window: Window, axis: int, size: int, out_lo: int, out_hi: int
) -> tuple[int, int, int, int]:
    """(lo, hi, pad before, pad after) of the input that outputs [out_lo, out_hi) read along
    `axis`: the field clipped to [0, size), and how far it reaches past each border."""
    first = out_lo * window.stride[axis] - window.pad[axis]
    last = (out_hi - 1) * window.stride[axis] - window.pad[axis]
    stop = last + (window.kernel[axis] - 1) * window.dilation[axis] + 1
    lo, hi = max(first, 0), min(stop, size)
    return lo, hi, lo - first, stop - hi


def patch_problem(
    graph: Graph, order: Sequence[int], traits: Traits, step_live: Sequence[int], total_macs: int
) -> PatchProblem:
    """The problem for `graph` planned in `order` with per-step live bytes `step_live`: the
    operators whose traits declare a window, linked into maximal chains. O(operators +
    tensors)."""
    consumers = graph.consumers()
    ops: dict[int, SpatialOp] = {}
    for op in graph.operators:
        window = traits[op.index].window if op.index in traits else None
        if window is None:
            continue
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        if not _tileable(x.shape, y.shape, window) or x.is_constant:
            continue
        ops[op.index] = SpatialOp(
            op.index,
            x.index,
            y.index,
            (x.shape[1], x.shape[2]),
            (y.shape[1], y.shape[2]),
            x.nbytes // max(x.shape[1] * x.shape[2], 1),
            y.nbytes // max(y.shape[1] * y.shape[2], 1),
            y.shape[3],
            window,
        )
    chains = _chains(graph, ops, consumers, order)
    life = tensor_lifetimes(graph, order)
    arena = set(graph.activation_tensors())
    lifetimes = {
        t: (first, last, align_up(graph.tensors[t].nbytes))
        for t, (first, last) in life.items()
        if t in arena
    }
    chained = {i for chain in chains for i in chain}
    fixed = 0
    for op in graph.operators:
        if op.index not in chained:
            tensors = {t for t in (*op.inputs, *op.outputs) if t in lifetimes}
            fixed = max(fixed, sum(lifetimes[t][2] for t in tensors))
    return PatchProblem(
        ops=ops,
        chains=chains,
        total_macs=total_macs,
        step={op_index: k + 1 for k, op_index in enumerate(order)},
        step_live=tuple(step_live),
        lifetimes=lifetimes,
        fixed_working_set=fixed,
    )


def _tileable(x: tuple[int, ...], y: tuple[int, ...], window: Window) -> bool:
    """Batch-1 NHWC in and out, with some rows and columns (a pointwise window is declared for
    any shape: here it must keep the height and width)."""
    if len(x) != 4 or len(y) != 4 or x[0] != 1 or y[0] != 1 or min(*x[1:3], *y[1:3]) < 1:
        return False
    return not window.pointwise or x[1:3] == y[1:3]


def _chains(
    graph: Graph,
    ops: Mapping[int, SpatialOp],
    consumers: Mapping[int, list[int]],
    order: Sequence[int],
) -> tuple[tuple[int, ...], ...]:
    """Maximal chains of tileable operators, in the order of their first operator."""
    outputs = set(graph.outputs)

    def successor(i: int) -> int | None:
        y = ops[i].output
        readers = consumers.get(y, [])
        if y in outputs or len(readers) != 1 or readers[0] not in ops:
            return None
        nxt = readers[0]
        return nxt if ops[nxt].input == y and graph.operators[nxt].inputs.count(y) == 1 else None

    following = {i: successor(i) for i in ops}
    has_predecessor = {n for n in following.values() if n is not None}
    chains = []
    for i in order:
        if i not in ops or i in has_predecessor:
            continue
        chain = [i]
        while (n := following[chain[-1]]) is not None:
            chain.append(n)
        chains.append(tuple(chain))
    return tuple(chains)
