"""Paging in a build: the board's fast and slow memory as plain numbers, the schedule of a plan's
buffers through them, and the moves the firmware performs (issue 11, items 3 to 5).

The fast memory is the board's internal RAM, where the arena lives; `--ram-budget` caps what the
arena may use of it. The slow memory is the board's largest writable memory outside it (the
SDRAM of a Discovery board: its own linker region), or, on a board without one, an array in RAM
costed at the board's slowest internal memory (an experiment: it shows the schedule, not a saving).
The cost model is the *overhead* against everything in fast memory, in cycles per byte:
copy out = fast read + slow write, copy in = slow read + fast write, and a kernel working in place
in slow memory pays the difference of the two memories' rates.

In the firmware a buffer's address is an offset in one virtual space: [0, fast bytes) is the arena,
fast bytes + s is slot s of slow memory (runtime_c/src/allocator.c). The schedule becomes the
moves of the dynamic allocator (`paged_dynamic`): before each operator, pages leave fast memory
(copied out when their fast copy is newer, else only re-addressed), then pages come in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from mcugen.model.ir import Graph
from mcugen.plan.buffers import Buffer, align_up
from mcugen.plan.dynamic import PAGED, DynamicPlan, Move
from mcugen.plan.paging.problem import CostModel, PagingError, PagingProblem, paging_problem
from mcugen.plan.paging.schedule import SLOW, Direction, Schedule, schedule_of
from mcugen.plan.paging.validate import validate


@dataclass(frozen=True)
class SlowMemory:
    """Where paged buffers go: `size` None when unbounded (the host), `external` when it is its
    own memory region (else an array in RAM), `mapped` when kernels may work on it in place."""

    name: str
    size: int | None
    external: bool
    read_cycles_per_byte: float
    write_cycles_per_byte: float
    mapped: bool = True
    energy_pj_per_byte: float | None = None  # None: not measured (boards/<name>/board.toml)


#: What paging minimises: CPU cycles, or energy (picojoules) when the board gives it per byte.
OBJECTIVES = ("cycles", "energy")


@dataclass(frozen=True)
class PagingCosts:
    """What paging costs on a target (`MemoryTarget.paging_costs`, plan/target.py) and how the
    user wants it searched: the slow memory, the fast memory's rates, its energy and name, the
    core's energy per cycle while it copies (the board's [energy] model, None: unknown), the
    pager and its work units, and what the schedules minimise (`objective`)."""

    slow: SlowMemory
    fast_read: float
    fast_write: float
    pager: str = "auto"
    work: float | None = None
    objective: str = "cycles"
    fast_energy: float | None = None  # pJ per byte of the fast memory, None: not measured
    fast_name: str = "RAM"
    pj_per_cycle: float | None = None

    @property
    def unit(self) -> str:
        """The unit of every cost of this target's schedules."""
        return "pJ" if self.objective == "energy" else "cycles"

    def cost_model(self) -> CostModel:
        """Overhead per byte against everything in fast memory, in `unit`."""
        if self.objective == "energy":
            return self._energy_model()
        slow = self.slow
        extra = max(
            slow.read_cycles_per_byte - self.fast_read,
            slow.write_cycles_per_byte - self.fast_write,
            0.0,
        )
        return CostModel(
            copy_out=self.fast_read + slow.write_cycles_per_byte,
            copy_in=slow.read_cycles_per_byte + self.fast_write,
            slow_access=extra if slow.mapped else None,
        )

    def _energy_model(self) -> CostModel:
        """Energy: a copy reads one memory and writes the other; an access in place costs the
        slow memory's energy less the fast one's. With the board's energy per cycle, the core's
        energy over the copy's cycles comes on top, and a memory without a per-byte figure counts
        none (an estimate). A one-line error when the board gives neither."""
        fast, slow = self.fast_energy, self.slow.energy_pj_per_byte
        if self.pj_per_cycle is not None:
            cycles = replace(self, objective="cycles").cost_model()
            fast, slow, per = fast or 0.0, slow or 0.0, self.pj_per_cycle
            return CostModel(
                cycles.copy_out * per + fast + slow,
                cycles.copy_in * per + slow + fast,
                None
                if cycles.slow_access is None
                else cycles.slow_access * per + max(slow - fast, 0.0),
            )
        if fast is None or slow is None:
            missing = " and ".join(
                name for name, e in ((self.fast_name, fast), (self.slow.name, slow)) if e is None
            )
            raise PagingError(
                f"--objective energy needs the energy per byte of {missing}; the board "
                "description gives none (energy_pj_per_byte in board.toml, from a measurement)",
                hint="plan with --objective cycles, or add measured figures to board.toml",
            )
        return CostModel(
            fast + slow, slow + fast, max(slow - fast, 0.0) if self.slow.mapped else None
        )


@dataclass(frozen=True)
class PagingPlan:
    """A plan's buffers paged through `capacity` bytes of fast memory: the schedule, and what it
    costs against the two baselines (millicycles, the schedule's unit)."""

    capacity: int
    slow: SlowMemory
    problem: PagingProblem
    schedule: Schedule
    #: every buffer in slow memory, each use in place (what a user without paging does), None
    #: when kernels may not work there
    all_in_slow: int | None
    #: the candidate orders paging chose among and the heuristic's cost of each (millicycles)
    orders_tried: tuple[tuple[str, int], ...] = ()
    unit: str = "cycles"  # of every cost (PagingCosts.unit), in thousandths

    @property
    def fast_bytes(self) -> int:
        """The arena the firmware declares: the highest fast byte the schedule uses."""
        return align_up(self.schedule.fast_peak)

    @property
    def slow_bytes(self) -> int:
        return self.schedule.slow_bytes

    @property
    def cost(self) -> int:
        return self.schedule.cost

    def traffic(self) -> list[tuple[int, int, int]]:
        """(step, bytes in, bytes out) of every step with copies before it."""
        found: dict[int, list[int]] = {}
        for c in self.schedule.copies:
            row = found.setdefault(c.step, [0, 0])
            row[0 if c.direction == Direction.IN else 1] += c.bytes
        return [(step, i, o) for step, (i, o) in sorted(found.items())]


def plan_paging(
    graph: Graph,
    order: Sequence[int],
    buffers: Sequence[Buffer],
    capacity: int,
    target: PagingCosts,
    layout: Mapping[int, int] | None = None,
) -> PagingPlan:
    """The schedule of `buffers` through `capacity` fast bytes, validated; `PagingError` (a user
    error with the shortfall) when some step's working set cannot fit. When `layout` (the plan's
    offsets of these buffers) fits in `capacity`, it is the schedule: nothing pages, at no cost
    (the pagers' own first step tries only the greedy layouts, which may be larger)."""
    from mcugen.plan.paging import get_pager

    if target.objective not in OBJECTIVES:
        raise ValueError(f"objective {target.objective!r}: one of {OBJECTIVES}")
    problem = paging_problem(graph, order, buffers, capacity, target.cost_model())
    problem.check_feasible()
    schedule = _resident(problem, layout) if layout is not None else None
    if schedule is None:
        schedule = get_pager(target.pager)(problem, budget=target.work)
    validate(problem, schedule)
    slow = target.slow
    if slow.size is not None and schedule.slow_bytes > slow.size:
        raise PagingError(
            f"the paged buffers need {schedule.slow_bytes:,} bytes of {slow.name}, "
            f"{schedule.slow_bytes - slow.size:,} more than its {slow.size:,}",
            hint="raise --ram-budget or use a board with a larger external memory",
        )
    rate = problem.cost.slow_per_byte
    whole = None if rate is None else sum(b.size * rate * len(b.uses) for b in problem.buffers)
    return PagingPlan(capacity, slow, problem, schedule, whole, unit=target.unit)


def _resident(problem: PagingProblem, layout: Mapping[int, int]) -> Schedule | None:
    """Every buffer in fast memory at its `layout` offset, or None when that exceeds capacity."""
    if any(layout[b.id] + b.size > problem.capacity for b in problem.buffers):
        return None
    timeline = {b.id: (layout[b.id],) * (b.last - b.first + 1) for b in problem.buffers}
    return schedule_of(problem, timeline, strategy="layout", lower_bound=0, proven_optimal=True)


def paged_dynamic(paging: PagingPlan, buffers: Sequence[Buffer], steps: int) -> DynamicPlan:
    """The dynamic allocator's tables for `paging` (runtime_c/src/allocator.c): birth addresses
    and, before each step, the pages leaving fast memory (a copy out only when the schedule makes
    one) and then the pages coming in, every address in the virtual space of the module doc."""
    schedule = paging.schedule
    fast = paging.fast_bytes
    timeline = schedule.timeline()
    slot = schedule.slow_offsets

    def address(buffer: int, where: int) -> int:
        return fast + slot[buffer] if where == SLOW else where

    outs = {(c.step, c.buffer) for c in schedule.copies if c.direction == Direction.OUT}
    births = [0] * len(buffers)
    moves: list[list[Move]] = [[] for _ in range(steps + 2)]
    for b in buffers:
        places = timeline.get(b.id)
        if places is None:  # an empty buffer: never paged, never addressed
            continue
        births[b.id] = address(b.id, places[0])
        for k in range(1, len(places)):
            step, prev, where = b.first + k, places[k - 1], places[k]
            if prev != SLOW and where != prev:
                moves[step].append(Move(b.id, fast + slot[b.id], (step, b.id) in outs))
    for c in schedule.copies:
        if c.direction == Direction.IN:
            moves[c.step].append(Move(c.buffer, c.fast_offset))
    # per step: every page out (by buffer) before every page in (by buffer), as the schedule
    ordered = [sorted(ms, key=lambda m: (m.dst < fast, m.buffer)) for ms in moves]
    plan = DynamicPlan(
        PAGED,
        tuple(buffers),
        steps,
        tuple(births),
        tuple(tuple(ms) for ms in ordered),
        fast,
        slow_bytes=paging.slow_bytes,
    )
    plan.validate()
    return plan
