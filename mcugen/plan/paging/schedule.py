"""A paging schedule: where each buffer is at each step, the copies between steps, and its cost.

Every planner produces a *timeline*: per buffer, its location at each step of its lifetime, a
fast-memory offset (>= 0) or `SLOW`. `schedule_of` derives the rest, so the planners share one
set of rules:
- a buffer enters fast memory from slow (or moves to another fast offset) by a copy in before the
  step; its birth step needs no copy (the operator, or the host at step 0, writes it in place);
- a buffer leaves fast memory (or moves) by a copy out, only when its fast copy is newer than the
  slow one (it was written in fast memory since the last copy): a clean page is dropped for free;
- at one step boundary, the copies out run before the copies in, so space freed by the ones makes
  room for the others;
- an operator using a buffer that is in slow memory pays `slow_access` per byte.
Slow memory: every buffer that is ever in slow memory keeps one slot there for its whole lifetime,
laid out by greedy-by-size (TFLM's planner) over those lifetimes; `slow_bytes` is that layout's
size. `validate` re-checks a schedule by simulating the data, independently of `schedule_of`.
For the firmware: the copies before each step (`copies_before`), the fast offsets at each step
(`offsets_at`), and the slow slots. A graph input in slow memory at step 0 is written by the host
into its slow slot; a graph output in slow memory at the last step is read from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from mcugen.plan.buffers import Buffer
from mcugen.plan.layout.greedy import greedy_by_size
from mcugen.plan.paging.problem import PagedBuffer, PagingProblem

#: Location of a buffer at a step that is not in fast memory.
SLOW = -1
#: Buffer id -> location at each step first..last (a fast offset, or SLOW).
Timeline = Mapping[int, tuple[int, ...]]


class Memory(StrEnum):
    FAST = "fast"
    SLOW = "slow"


class Direction(StrEnum):
    OUT = "out"  # fast -> slow
    IN = "in"  # slow -> fast


class ScheduleInvalid(AssertionError):
    """A planner produced an inconsistent schedule: a bug in mcugen, not a user error."""


@dataclass(frozen=True)
class Episode:
    """`buffer` stays in `memory` at `offset` from step `first` to step `last`."""

    buffer: int
    first: int
    last: int
    memory: Memory
    offset: int


@dataclass(frozen=True)
class Copy:
    """A copy at the boundary before `step` (after step - 1): a row of the firmware's table, run
    before the operator at order position step - 1, copies out before copies in."""

    step: int
    direction: Direction
    buffer: int
    bytes: int
    fast_offset: int
    slow_offset: int


@dataclass(frozen=True)
class Schedule:
    episodes: tuple[Episode, ...]  # by buffer, then step
    copies: tuple[Copy, ...]  # by step, copies out before copies in, then buffer
    slow_offsets: Mapping[int, int]  # buffer id -> its slot in slow memory (paged buffers only)
    slow_bytes: int
    cost: int  # millicycles: copies plus slow accesses
    lower_bound: int  # millicycles: no schedule of this problem costs less
    proven_optimal: bool
    strategy: str
    note: str = ""  # e.g. "work budget spent: gap open", "model too large: heuristic kept"
    work: float = 0.0  # solver work spent (CP-SAT deterministic time units)
    fast_peak: int = field(default=0)  # highest fast-memory byte used at any step

    @property
    def cycles(self) -> float:
        return self.cost / 1000

    @property
    def bytes_in(self) -> int:
        return sum(c.bytes for c in self.copies if c.direction == Direction.IN)

    @property
    def bytes_out(self) -> int:
        return sum(c.bytes for c in self.copies if c.direction == Direction.OUT)

    def copies_before(self, step: int) -> tuple[Copy, ...]:
        """The copies the firmware performs before the operator of `step`, in order."""
        return tuple(c for c in self.copies if c.step == step)

    def timeline(self) -> dict[int, tuple[int, ...]]:
        """Buffer id -> location at each step of its lifetime (fast offset or SLOW)."""
        found: dict[int, list[int]] = {}
        for e in self.episodes:
            where = e.offset if e.memory == Memory.FAST else SLOW
            found.setdefault(e.buffer, []).extend([where] * (e.last - e.first + 1))
        return {b: tuple(places) for b, places in found.items()}

    def validate(self, problem: PagingProblem) -> None:
        """Raise `ScheduleInvalid` on any violation (paging/validate.py)."""
        from mcugen.plan.paging.validate import validate

        validate(problem, self)

    def offsets_at(self, step: int) -> dict[int, int]:
        """Buffer id -> fast offset of every buffer in fast memory at `step` (the firmware's
        offset table for the operator of that step)."""
        return {
            e.buffer: e.offset
            for e in self.episodes
            if e.memory == Memory.FAST and e.first <= step <= e.last
        }

    def fast_offset(self, buffer: int, step: int) -> int | None:
        """Where `buffer` is in fast memory at `step`, None when it is in slow memory or dead."""
        for e in self.episodes:
            if e.buffer == buffer and e.first <= step <= e.last:
                return e.offset if e.memory == Memory.FAST else None
        return None


def _events(
    problem: PagingProblem, b: PagedBuffer, places: tuple[int, ...], slow_offset: int
) -> tuple[list[Copy], int]:
    """The copies a timeline implies for one buffer, and its cost in millicycles."""
    cost = problem.cost
    copies: list[Copy] = []
    total = 0
    dirty = False  # the fast copy is newer than the slow one
    for k, s in enumerate(range(b.first, b.last + 1)):
        where = places[k]
        prev = places[k - 1] if k else None
        if prev is not None and prev != SLOW and where != prev and dirty:
            copies.append(Copy(s, Direction.OUT, b.id, b.size, prev, slow_offset))
            total += b.size * cost.out_per_byte
        if prev is not None and where != SLOW and where != prev:
            copies.append(Copy(s, Direction.IN, b.id, b.size, where, slow_offset))
            total += b.size * cost.in_per_byte
        if where != prev:
            dirty = False
        if s in b.writes:
            dirty = where != SLOW
        if where == SLOW and s in b.uses:
            per_byte = cost.slow_per_byte
            if per_byte is None:
                raise ScheduleInvalid(f"buffer {b.id} is used in slow memory at step {s}")
            total += b.size * per_byte
    return copies, total


def slow_layout(problem: PagingProblem, paged: set[int]) -> tuple[dict[int, int], int]:
    """One slot per paged buffer for its lifetime (greedy by size): offsets and bytes."""
    lives = [Buffer(b.id, b.size, b.first, b.last) for b in problem.buffers if b.id in paged]
    offsets = greedy_by_size(lives)
    return offsets, max((offsets[b.id] + b.size for b in lives), default=0)


def schedule_of(
    problem: PagingProblem,
    timeline: Timeline,
    *,
    strategy: str,
    lower_bound: int,
    proven_optimal: bool = False,
    note: str = "",
    work: float = 0.0,
) -> Schedule:
    """The schedule of `timeline`: episodes, the copies it implies, slow slots and cost."""
    paged = {b for b, places in timeline.items() if SLOW in places or len(set(places)) > 1}
    slow_offsets, slow_bytes = slow_layout(problem, paged)
    episodes: list[Episode] = []
    copies: list[Copy] = []
    cost = 0
    for b in sorted(problem.buffers, key=lambda x: x.id):
        places = timeline[b.id]
        found, spent = _events(problem, b, places, slow_offsets.get(b.id, 0))
        copies += found
        cost += spent
        start = b.first
        for s in range(b.first, b.last + 1):
            if s == b.last or places[s + 1 - b.first] != places[s - b.first]:
                where = places[s - b.first]
                memory = Memory.SLOW if where == SLOW else Memory.FAST
                offset = slow_offsets[b.id] if where == SLOW else where
                episodes.append(Episode(b.id, start, s, memory, offset))
                start = s + 1
    copies.sort(key=lambda c: (c.step, c.direction != Direction.OUT, c.buffer))
    peak = max(
        (e.offset + problem.by_id()[e.buffer].size for e in episodes if e.memory == Memory.FAST),
        default=0,
    )
    return Schedule(
        tuple(episodes),
        tuple(copies),
        MappingProxyType(slow_offsets),
        slow_bytes,
        cost,
        lower_bound,
        proven_optimal or cost <= lower_bound,
        strategy,
        note,
        work,
        peak,
    )
