"""The plain data a patch-stage planner reads, and the plan it returns.

A *stage* is a connected sub-graph of spatially local operators (each declares a `Window`,
mcugen/model/traits.py): a contiguous range of the whole plan's order whose only tensor used
after the range (or as a graph output) is its *end*, the last operator's output, kept whole. Its
inputs (every tensor it reads that is produced before it) stay whole too. Run patch by patch over
an n x m grid of the end tensor, each tile computes the receptive field it needs through the
stage into small per-tile buffers (halos recomputed, padding only at the image's true borders)
and writes its tile into the whole end (MCUNetV2, Lin et al., NeurIPS 2021). Branches, residual
ADDs and channel concatenations are inside a stage like any other operator: a tensor read by
several operators of the stage holds the hull of what they read, and a reader that needs less
(a residual ADD next to a halo-shrinking branch) reads a crop of it.

Geometry is separable: a tile's rows depend only on the tile row, its columns only on the tile
column, so each axis is computed once per (stage, split count) and a tile is a pair of spans.
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
    """One tileable operator: its tensors, extents and window (batch 1, NHWC). `inputs` are the
    tensors its window reads (input 0, or every non-constant input with `Window.all_inputs`),
    all of extent `in_hw`; `in_pixel_bytes` is each one's channels x element size."""

    index: int
    inputs: tuple[int, ...]
    output: int
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    in_pixel_bytes: tuple[int, ...]
    out_pixel_bytes: int
    out_channels: int
    window: Window


@dataclass(frozen=True)
class PatchProblem:
    """The tileable operators, the order they run in and what the rest of the graph costs, as
    plain numbers."""

    ops: Mapping[int, SpatialOp]
    #: the whole graph's operators in the order the rest of the graph is planned with
    order: tuple[int, ...]
    total_macs: int
    #: operator -> step (1-based) in that order
    step: Mapping[int, int]
    #: peak live bytes at each step of that plan (0 = before the first operator)
    step_live: tuple[int, ...]
    #: activation tensor -> (first step, last step, aligned bytes) in that order
    lifetimes: Mapping[int, tuple[int, int, int]]
    #: tensor -> the last step that reads it (len(order) + 1 for a graph output)
    last_read: Mapping[int, int] = field(default_factory=dict)
    #: non-tileable operators' largest working set (inputs, outputs): bounds any patched plan
    fixed_working_set: int = 0


@dataclass(frozen=True)
class AxisTile:
    """One tile's extent along one axis, per operator of the stage (in stage order): the input
    span [lo, hi) it reads from each of its inputs, the padding before/after it applies there
    (non-zero only at the image's borders), and the output span [out_lo, out_hi) it writes. An
    input produced inside the stage holds its producer's output span; a reader whose span is
    narrower reads a crop of it."""

    lo: tuple[int, ...]
    hi: tuple[int, ...]
    pad_before: tuple[int, ...]
    pad_after: tuple[int, ...]
    out_lo: tuple[int, ...]
    out_hi: tuple[int, ...]


@dataclass(frozen=True)
class PatchStage:
    """The chosen stage: operators in the whole plan's order, the grid of the end tensor, and
    per tile row (`rows`) and tile column (`cols`) the spans of every operator."""

    ops: tuple[int, ...]
    grid: tuple[int, int]
    rows: tuple[AxisTile, ...]
    cols: tuple[AxisTile, ...]
    macs: int  # of the stage run patch by patch
    macs_added: int  # over running it whole (recomputed halos)
    peak: int  # estimated bytes while it runs: inputs and end whole, the tiles' live buffers

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
    lower_bound: int  # no stage the search considers, any grid, gets the estimate below this
    curve: tuple[CurvePoint, ...] = field(default=(), repr=False)  # the arena/MAC front
    runners_up: tuple[PatchStage, ...] = field(default=(), repr=False)  # the next candidates

    @property
    def overhead(self) -> float:
        if self.stage is None or not self.total_macs:
            return 0.0
        return self.stage.macs_added / self.total_macs

    def validate(self, problem: PatchProblem) -> None:
        """Raise `PatchPlanInvalid` unless the stage is a stage of the problem (`stage_error`),
        its tiles partition the end tensor, every operator's spans are exactly the receptive
        field of its output span (padding only beyond the input's borders), every input made
        inside the stage holds what its readers read (crops inside their producer's span), and
        the MACs added stay within the budget."""
        stage = self.stage
        if stage is None:
            return
        error = stage_error(problem, stage.ops)
        if error:
            raise PatchPlanInvalid(f"operators {stage.ops}: {error}")
        if self.total_macs and stage.macs_added > self.budget * self.total_macs:
            raise PatchPlanInvalid(f"stage adds {stage.macs_added} MACs, over the budget")
        ops = [problem.ops[i] for i in stage.ops]
        for axis, tiles in ((0, stage.rows), (1, stage.cols)):
            _check_axis(ops, axis, tiles)


def stage_error(problem: PatchProblem, ops: Sequence[int]) -> str:
    """Why `ops` is not a stage of `problem` ("" when it is): at least two tileable operators,
    a contiguous range of the order, every output but the last read inside the range only."""
    if len(ops) < 2 or any(i not in problem.ops for i in ops):
        return "not two or more tileable operators"
    steps = [problem.step[i] for i in ops]
    if steps != list(range(steps[0], steps[0] + len(ops))):
        return "not a contiguous range of the order"
    for i in ops[:-1]:
        if problem.last_read.get(problem.ops[i].output, 0) > steps[-1]:
            return f"operator {i}'s output is used after the stage"
    return ""


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
    producer = {op.output: j for j, op in enumerate(ops)}
    for t in tiles:
        for j, op in enumerate(ops):
            if not 0 <= t.out_lo[j] < t.out_hi[j] <= op.out_hw[axis]:
                raise PatchPlanInvalid(f"operator {op.index}: output span out of its tensor")
            want = receptive_span(op.window, axis, op.in_hw[axis], t.out_lo[j], t.out_hi[j])
            got = (t.lo[j], t.hi[j], t.pad_before[j], t.pad_after[j])
            if want != got or got[1] <= got[0]:
                raise PatchPlanInvalid(f"operator {op.index}: span {got}, receptive field {want}")
            for x in op.inputs:
                p = producer.get(x)
                if p is not None and not t.out_lo[p] <= t.lo[j] < t.hi[j] <= t.out_hi[p]:
                    raise PatchPlanInvalid(
                        f"operator {op.index} reads [{t.lo[j]}, {t.hi[j]}) of tensor {x}, "
                        f"its producer's tile holds [{t.out_lo[p]}, {t.out_hi[p]})"
                    )


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
    operators whose traits declare a window and whose shapes fit it. O(operators + tensors)."""
    ops: dict[int, SpatialOp] = {}
    for op in graph.operators:
        window = traits[op.index].window if op.index in traits else None
        spatial = _spatial_op(graph, op.index, window) if window is not None else None
        if spatial is not None:
            ops[op.index] = spatial
    step = {op_index: k + 1 for k, op_index in enumerate(order)}
    last_read: dict[int, int] = {}
    for op_index in order:
        for t in graph.operators[op_index].inputs:
            last_read[t] = step[op_index]
    for t in graph.outputs:
        last_read[t] = len(order) + 1
    life = tensor_lifetimes(graph, order)
    arena = set(graph.activation_tensors())
    lifetimes = {
        t: (first, last, align_up(graph.tensors[t].nbytes))
        for t, (first, last) in life.items()
        if t in arena
    }
    fixed = 0
    for op in graph.operators:
        if op.index not in ops:
            tensors = {t for t in (*op.inputs, *op.outputs) if t in lifetimes}
            fixed = max(fixed, sum(lifetimes[t][2] for t in tensors))
    return PatchProblem(
        ops=ops,
        order=tuple(order),
        total_macs=total_macs,
        step=step,
        step_live=tuple(step_live),
        lifetimes=lifetimes,
        last_read=last_read,
        fixed_working_set=fixed,
    )


def _spatial_op(graph: Graph, index: int, window: Window) -> SpatialOp | None:
    """The operator as a `SpatialOp`, or None unless its window's inputs and its output are
    batch-1 NHWC with some rows and columns, of one extent (a pointwise window keeps it)."""
    op = graph.operators[index]
    if len(op.outputs) != 1 or op.outputs[0] < 0 or not op.inputs or op.inputs[0] < 0:
        return None
    picked = [t for t in op.inputs if t >= 0 and not graph.tensors[t].is_constant]
    read = tuple(picked) if window.all_inputs else (op.inputs[0],)
    y = graph.tensors[op.outputs[0]]
    xs = [graph.tensors[t] for t in read]
    if not xs or any(x.is_constant or not _tileable(x.shape, y.shape, window) for x in xs):
        return None
    if len({x.shape[1:3] for x in xs}) != 1:
        return None
    x = xs[0]
    return SpatialOp(
        index,
        read,
        y.index,
        (x.shape[1], x.shape[2]),
        (y.shape[1], y.shape[2]),
        tuple(t.nbytes // (x.shape[1] * x.shape[2]) for t in xs),
        y.nbytes // (y.shape[1] * y.shape[2]),
        y.shape[3],
        window,
    )


def _tileable(x: tuple[int, ...], y: tuple[int, ...], window: Window) -> bool:
    """Batch-1 NHWC in and out, with some rows and columns (a pointwise window is declared for
    any shape: here it must keep the height and width)."""
    if len(x) != 4 or len(y) != 4 or x[0] != 1 or y[0] != 1 or min(*x[1:3], *y[1:3]) < 1:
        return False
    return not window.pointwise or x[1:3] == y[1:3]
