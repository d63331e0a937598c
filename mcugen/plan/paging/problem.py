"""The paging problem: buffers with the steps that use them, a fast memory of C bytes, a cost model.

Steps follow plan/buffers.py: step 0 is before the first operator (the host writes the graph
inputs there), the operator at order position k runs at step k + 1, and the graph outputs are read
at the last step (`steps`). A buffer is written at its `writes` steps (its producer, the producers
of the tensors aliased into it, step 0 for a graph input) and read at the other `uses`; `first` and
`last` are always uses, so a buffer never needs its bytes before `first` or after `last`.
Costs are integers in millicycles (cycles per byte x 1000, rounded), so sums are exact and the
same on every machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.plan.buffers import ARENA_ALIGNMENT, Buffer

#: Costs are kept in millicycles: a cost model constant is rounded to 1/1000 cycle per byte.
COST_SCALE = 1000


class PagingError(McugenError):
    """No schedule exists: some step needs more fast memory than there is."""


@dataclass(frozen=True)
class CostModel:
    """Cycles per byte of each kind of traffic. `slow_access`: cycles per byte for an operator to
    read or write a buffer in place in slow memory, None when kernels may not (memory that is
    only reachable by copies): then a buffer is in fast memory at every step that uses it."""

    copy_out: float = 1.0  # fast -> slow
    copy_in: float = 1.0  # slow -> fast
    slow_access: float | None = None

    def __post_init__(self) -> None:
        for name in ("copy_out", "copy_in", "slow_access"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ValueError(f"cost model: {name} must be a number >= 0, not {value}")

    @property
    def out_per_byte(self) -> int:
        """Millicycles per byte copied out."""
        return round(self.copy_out * COST_SCALE)

    @property
    def in_per_byte(self) -> int:
        return round(self.copy_in * COST_SCALE)

    @property
    def slow_per_byte(self) -> int | None:
        return None if self.slow_access is None else round(self.slow_access * COST_SCALE)


@dataclass(frozen=True)
class PagedBuffer:
    """A buffer to page: `uses` are the steps an operator (or the host) touches it, sorted,
    `writes` the subset that writes it. Its bytes are needed from `first` to `last`."""

    id: int
    size: int
    first: int
    last: int
    uses: tuple[int, ...]
    writes: tuple[int, ...]

    def alive(self, step: int) -> bool:
        return self.first <= step <= self.last


@dataclass(frozen=True)
class PagingProblem:
    buffers: tuple[PagedBuffer, ...]
    steps: int  # operators; the steps are 0..steps
    capacity: int  # fast memory bytes
    cost: CostModel
    align: int = ARENA_ALIGNMENT

    def __post_init__(self) -> None:
        ids = [b.id for b in self.buffers]
        if len(set(ids)) != len(ids):
            raise ValueError("paging problem: buffer ids must be distinct")
        for b in self.buffers:
            if b.size <= 0 or b.size % self.align or not 0 <= b.first <= b.last <= self.steps:
                raise ValueError(f"paging problem: buffer {b.id} has a bad size or lifetime")
            if not b.uses or b.uses[0] != b.first or b.uses[-1] != b.last:
                raise ValueError(f"paging problem: buffer {b.id} is not used at first and last")
            if list(b.uses) != sorted(set(b.uses)) or not set(b.writes) <= set(b.uses):
                raise ValueError(f"paging problem: buffer {b.id} has bad use steps")
            if b.first not in b.writes:
                raise ValueError(f"paging problem: buffer {b.id} is not written at its first step")

    def by_id(self) -> dict[int, PagedBuffer]:
        return dict(self.index)

    @cached_property
    def index(self) -> Mapping[int, PagedBuffer]:
        """Buffer id -> buffer (computed once)."""
        return MappingProxyType({b.id: b for b in self.buffers})

    def live_bytes(self) -> list[int]:
        """Bytes alive at each step 0..steps."""
        live = [0] * (self.steps + 1)
        for b in self.buffers:
            for s in range(b.first, b.last + 1):
                live[s] += b.size
        return live

    def must_be_fast(self, b: PagedBuffer, step: int) -> bool:
        """`b` is in fast memory at `step` in every schedule."""
        return self.cost.slow_access is None and step in b.uses

    def working_set(self, step: int) -> int:
        """Bytes that must be in fast memory at `step`."""
        return sum(b.size for b in self.buffers if b.alive(step) and self.must_be_fast(b, step))

    def check_feasible(self) -> None:
        """Raise `PagingError` with the shortfall when some step's working set exceeds C."""
        worst = max(range(self.steps + 1), key=lambda s: (self.working_set(s), -s), default=0)
        need = self.working_set(worst)
        if need > self.capacity:
            raise PagingError(
                f"step {worst} needs {need} bytes of fast memory at once, {need - self.capacity} "
                f"more than the {self.capacity} available",
                hint="raise --ram-budget, or let kernels work in the slow memory where the "
                "board maps it (no --copies-only)",
            )


def use_steps(
    graph: Graph, order: Sequence[int], buffers: Sequence[Buffer]
) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """Buffer id -> (use steps, write steps), from the operators that read and write the tensors
    stored in it (aliased members included), the graph inputs (written at step 0) and outputs
    (read at the last step), and the operator of a scratch buffer. O(operator inputs/outputs)."""
    steps = len(order)
    touched: dict[int, tuple[set[int], set[int]]] = {}  # tensor -> (uses, writes)

    def note(t: int, step: int, write: bool) -> None:
        uses, writes = touched.setdefault(t, (set(), set()))
        uses.add(step)
        if write:
            writes.add(step)

    for t in graph.inputs:
        note(t, 0, True)
    op_step = {op_index: step for step, op_index in enumerate(order, start=1)}
    for op_index, step in op_step.items():
        op = graph.operators[op_index]
        for t in op.inputs:
            if t >= 0:
                note(t, step, False)
        for t in op.outputs:
            if t >= 0:
                note(t, step, True)
    for t in graph.outputs:
        note(t, steps, False)
    found: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for b in buffers:
        uses: set[int] = {b.first, b.last}
        writes: set[int] = {b.first}
        if b.scratch_of >= 0:
            uses.add(op_step[b.scratch_of])
        for t, _ in b.tensor_placements():
            t_uses, t_writes = touched.get(t, (set(), set()))
            uses |= {s for s in t_uses if b.first <= s <= b.last}
            writes |= {s for s in t_writes if b.first <= s <= b.last}
        found[b.id] = (tuple(sorted(uses)), tuple(sorted(writes)))
    return found


def paging_problem(
    graph: Graph,
    order: Sequence[int],
    buffers: Sequence[Buffer],
    capacity: int,
    cost: CostModel,
    uses: Mapping[int, tuple[tuple[int, ...], tuple[int, ...]]] | None = None,
) -> PagingProblem:
    """The problem of paging `buffers` (the plan's, for `order`) through `capacity` fast bytes.
    A profiled buffer counts its largest extent throughout (buffers move whole)."""
    found = uses if uses is not None else use_steps(graph, order, buffers)
    paged = tuple(
        PagedBuffer(b.id, b.size, b.first, b.last, found[b.id][0], found[b.id][1])
        for b in buffers
        if b.size > 0
    )
    return PagingProblem(paged, len(order), capacity, cost)
