"""Fast paging heuristic: demand paging with furthest-next-use eviction and a fragmentation-aware
first fit in fast memory.

Steps:
1. If a static layout of all buffers (the best greedy of plan/layout) fits in C, nothing pages.
2. Otherwise walk the steps (once per `POLICIES` variant, the cheapest kept). Before step s,
   free the buffers that died; then place each buffer
   used at s that is not in fast memory (largest first): into the best-fitting free hole, else
   into the window of fast memory whose eviction costs least, where evicting a buffer costs its
   copy out (when its fast copy is newer) and its copy back, divided by the steps until its next
   use (Belady, 1966: furthest next use first, weighted by bytes for unequal sizes). Windows start
   at 0 or at a resident's end, or end at C or at a resident's start; a window never covers a
   buffer used at s.
3. When no window is free of buffers used at s (fragmentation), repack: evict everything, put the
   buffers used at s back from offset 0 (those that move are copied out and in).
4. When kernels may work in slow memory, a buffer stays there when that is cheaper than copying
   it in (and than the evictions that would make room).
Copies follow from the locations (schedule.schedule_of). Complexity O(steps x live^2).
Weaknesses: no lookahead beyond next uses (it never copies in early, nor moves a buffer to make a
hole for a later one); the weighted score is not Belady's optimal for unequal sizes.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

from mcugen.plan.buffers import Buffer
from mcugen.plan.layout.local_search import best_greedy
from mcugen.plan.paging.bound import paging_lower_bound
from mcugen.plan.paging.problem import PagedBuffer, PagingProblem
from mcugen.plan.paging.schedule import SLOW, Schedule, Timeline, schedule_of


@dataclass(frozen=True)
class Policy:
    """One variant of the walk: how a window's victims are scored (`weighted`: eviction cost per
    step until each victim's next use; `furthest`: Belady's rule, the soonest next use among the
    victims as late as possible; `cheapest`: the least eviction cost) and which free hole a
    buffer takes (`best` fit or `first` fit)."""

    score: str = "weighted"
    fit: str = "best"


#: The variants `plan_belady` runs, best result kept (ties: the first).
POLICIES = (
    Policy("weighted", "best"),
    Policy("furthest", "best"),
    Policy("cheapest", "best"),
    Policy("weighted", "first"),
)


@dataclass
class _Fast:
    """The fast memory during the walk: residents' offsets and which are newer than slow."""

    capacity: int
    policy: Policy
    offsets: dict[int, int] = field(default_factory=dict)
    dirty: set[int] = field(default_factory=set)

    def holes(self, size: dict[int, int]) -> list[tuple[int, int]]:
        """Free (start, end) ranges in address order."""
        found, cursor = [], 0
        for start, b in sorted((o, b) for b, o in self.offsets.items()):
            if start > cursor:
                found.append((cursor, start))
            cursor = max(cursor, start + size[b])
        if cursor < self.capacity:
            found.append((cursor, self.capacity))
        return found

    def evict(self, b: int) -> None:
        del self.offsets[b]
        self.dirty.discard(b)


def static_timeline(problem: PagingProblem) -> Timeline | None:
    """Every buffer at one fast offset for its lifetime, when the best greedy layout fits in C."""
    lives = [Buffer(b.id, b.size, b.first, b.last) for b in problem.buffers]
    _, offsets = best_greedy(lives)
    if max((offsets[b.id] + b.size for b in lives), default=0) > problem.capacity:
        return None
    return {b.id: (offsets[b.id],) * (b.last - b.first + 1) for b in problem.buffers}


def plan_belady(problem: PagingProblem, *, budget: float | None = None) -> Schedule:
    """The heuristic schedule, validated (`budget` is ignored: the heuristic is fast)."""
    del budget
    problem.check_feasible()
    lower = paging_lower_bound(problem)
    static = static_timeline(problem)
    timelines = [static] if static is not None else [belady_timeline(problem, p) for p in POLICIES]
    found = [schedule_of(problem, t, strategy="belady", lower_bound=lower) for t in timelines]
    best = min(found, key=lambda schedule: schedule.cost)
    best.validate(problem)
    return best


def belady_timeline(problem: PagingProblem, policy: Policy = POLICIES[0]) -> Timeline:
    """The locations of the walk in the module docstring."""
    size = {b.id: b.size for b in problem.buffers}
    # Offsets on the grid of the greatest common divisor of the sizes, as the exact model's.
    unit = math.gcd(*size.values()) or problem.align
    fast = _Fast(problem.capacity // unit * unit, policy)
    places: dict[int, list[int]] = {b.id: [] for b in problem.buffers}
    born: dict[int, list[PagedBuffer]] = {}
    for b in problem.buffers:
        born.setdefault(b.first, []).append(b)
    alive: list[PagedBuffer] = []
    for s in range(problem.steps + 1):
        alive = [b for b in alive if b.last >= s] + born.get(s, [])
        for r in [r for r in fast.offsets if problem.index[r].last < s]:
            fast.evict(r)
        used = sorted((b for b in alive if s in b.uses), key=lambda b: (-b.size, b.id))
        for b in used:
            if b.id not in fast.offsets:
                _bring_in(problem, fast, b, s, used, size)
        for b in alive:
            if s in b.writes and b.id in fast.offsets:
                fast.dirty.add(b.id)
            places[b.id].append(fast.offsets.get(b.id, SLOW))
    return {b: tuple(p) for b, p in places.items()}


def _bring_in(
    problem: PagingProblem,
    fast: _Fast,
    b: PagedBuffer,
    s: int,
    used: list[PagedBuffer],
    size: dict[int, int],
) -> None:
    """Place `b` in fast memory for step s (or leave it in slow memory when that is cheaper)."""
    cost = problem.cost
    slow = cost.slow_per_byte
    uses_left = len(b.uses) - bisect.bisect_left(b.uses, s)
    copy_in = 0 if s == b.first else cost.in_per_byte
    if slow is not None and copy_in >= slow * uses_left:
        return
    fits = [(end - start, start) for start, end in fast.holes(size) if end - start >= b.size]
    if fits:
        first_fit = fast.policy.fit == "first"
        fast.offsets[b.id] = min(fits, key=lambda f: (0, f[1]) if first_fit else f)[1]
        return
    protected = {u.id for u in used}
    window = _cheapest_window(problem, fast, b, s, protected, size)
    if window is not None:
        at, spent, victims = window
        if slow is None or spent < (slow * uses_left - copy_in) * b.size:
            for v in victims:
                fast.evict(v)
            fast.offsets[b.id] = at
        return
    if slow is None:
        _repack(fast, [u for u in used if u.id in fast.offsets or u.id == b.id])


def _cheapest_window(
    problem: PagingProblem,
    fast: _Fast,
    b: PagedBuffer,
    s: int,
    protected: set[int],
    size: dict[int, int],
) -> tuple[int, int, list[int]] | None:
    """(offset, millicycles the evictions cost, victims) of the window for `b` whose evictions
    weigh least (cost per step until the victim's next use), None if every window holds a
    buffer used at s."""
    cap = fast.capacity
    starts = {0, cap - b.size}
    for r, o in fast.offsets.items():
        starts |= {o + size[r], o - b.size}
    best: tuple[float, int, int, int, list[int]] | None = None
    for at in sorted(x for x in starts if 0 <= x <= cap - b.size):
        victims = sorted(r for r, o in fast.offsets.items() if o < at + b.size and at < o + size[r])
        if any(v in protected for v in victims):
            continue
        costs = [_eviction_cost(problem, fast, v, s) for v in victims]
        weight = _score(fast.policy, costs)
        key = (weight, sum(size[v] for v in victims), at, sum(c for c, _ in costs), victims)
        if best is None or key[:3] < best[:3]:
            best = key
    return None if best is None else (best[2], best[3], best[4])


def _score(policy: Policy, costs: list[tuple[int, int]]) -> float:
    """How bad evicting victims of these (cost, steps to next use) is: lower is better."""
    if policy.score == "furthest":
        return -min((distance for _, distance in costs), default=1 << 30)
    if policy.score == "cheapest":
        return sum(spent for spent, _ in costs)
    return sum(spent / distance for spent, distance in costs)


def _eviction_cost(problem: PagingProblem, fast: _Fast, v: int, s: int) -> tuple[int, int]:
    """(millicycles, steps until the next use) of evicting `v` before step s: its copy out when
    newer than slow, and its copy back (or slow access) at the next use."""
    buf = problem.index[v]
    cost = problem.cost
    nxt = buf.uses[bisect.bisect_right(buf.uses, s)]
    back = cost.in_per_byte
    if cost.slow_per_byte is not None:
        back = min(back, cost.slow_per_byte)
    out = cost.out_per_byte if v in fast.dirty else 0
    return buf.size * (out + back), nxt - s


def _repack(fast: _Fast, keep: list[PagedBuffer]) -> None:
    """Evict everything, then place `keep` from offset 0 in their order (fits: the step's
    working set is at most C). A buffer that lands where it was keeps its newer-than-slow mark."""
    before = dict(fast.offsets)
    dirty = set(fast.dirty)
    for r in list(fast.offsets):
        fast.evict(r)
    cursor = 0
    for u in keep:
        fast.offsets[u.id] = cursor
        if before.get(u.id) == cursor and u.id in dirty:
            fast.dirty.add(u.id)
        cursor += u.size
    assert cursor <= fast.capacity, "check_feasible admits no step above the capacity"
