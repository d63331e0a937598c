"""The default layout chooser: the fast greedies first, search only while a gap remains.

Steps:
1. Run the fast greedies (`local_search.GREEDIES`: by size as TFLM, by breadth, by conflicts,
   skyline best fit), keep the smallest arena (the earlier greedy on ties) and stop as soon as
   one reaches the live-bytes lower bound, which no layout can beat.
2. If a gap remains and there are at most `CPSAT_MAX_BUFFERS` buffers, ask CP-SAT exactly as
   `--layout cpsat` does with the same `time_budget` (from the best greedy); it settles a layout
   at the live bound in 0.01-0.2 s where one exists, and proves optimality or returns its best.
3. If a gap still remains, hill-climb from the best so far (`local_search.improve`) as
   `--layout local_search` does with the same `time_budget`. The smallest is kept.
   (CP-SAT went second until 2026-12: on NAS cells the local search never closed a gap that
   CP-SAT then closed, so it spent its whole budget for nothing: nas_cells5 planned in 3.2 s,
   1.8 s with CP-SAT first, same arenas on the 12 generated graphs and every shared model
   in benchmarks/snapshot.py's host and f767 cases, 4 with other offsets.)
So auto is never above any layout it tried, each step being the named strategy's own call (the
strategy table of `mcugen plan` compares them). Deterministic: every budget is work, never
measured time. Complexity: that of the greedies, O(n (T + n)), when one reaches the bound (most
real models); otherwise the local search's and CP-SAT's budgets, the sum of both.
Weakness: the first greedy at the bound wins, not the one that would fragment least after later
rewrites; above `CPSAT_MAX_BUFFERS` nothing proves optimality (a patch stage's tiles can take
more: mobilenet_v2's 345 buffers, where `--layout cpsat` finds 428,176 bytes against auto's
443,264); importing OR-Tools costs about
half a second the first time.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from mcugen.plan.buffers import Buffer
from mcugen.plan.layout import local_search
from mcugen.plan.layout.cpsat import solve_cpsat
from mcugen.plan.layout.local_search import GREEDIES, PLACEMENTS_PER_SECOND, improve
from mcugen.plan.layout.placement import LayoutResult, arena_of, live_lower_bound

#: CP-SAT settled every random instance we tried up to 600 buffers (its first question, a layout at
#: the live bound, takes 0.01-0.2 s there); above 300 the model alone costs tens of milliseconds.
CPSAT_MAX_BUFFERS = 300


def choose_layout(buffers: Sequence[Buffer], *, time_budget: float | None = None) -> LayoutResult:
    """The smallest layout found by the greedies, then local search, then CP-SAT."""
    bound = live_lower_bound(buffers)
    tried: list[tuple[str, int]] = []
    best: tuple[str, dict[int, int]] = ("", {})
    for name, layout in GREEDIES.items():
        offsets = layout(buffers)
        tried.append((name, arena_of(buffers, offsets)))
        if not best[0] or tried[-1][1] < arena_of(buffers, best[1]):
            best = (name, offsets)
        if arena_of(buffers, best[1]) <= bound:
            return _result(buffers, best, bound, tried)
    if time_budget is not None and time_budget <= 0:
        return _result(buffers, best, bound, tried)
    exact = None
    if len(buffers) <= CPSAT_MAX_BUFFERS:  # what --layout cpsat does, from the best greedy
        exact = solve_cpsat(buffers, time_budget=time_budget)
        tried.append(("cpsat", exact.arena))
        if exact.arena < arena_of(buffers, best[1]):
            best = ("cpsat", dict(exact.offsets))
        bound = max(bound, exact.lower_bound)
        if exact.arena <= bound:
            return _result(buffers, best, bound, tried, exact.note)
    budget = local_search.DEFAULT_BUDGET if time_budget is None else time_budget
    placements = int(budget * PLACEMENTS_PER_SECOND)
    if placements > 0:  # what --layout local_search does: improve the best greedy
        offsets = improve(buffers, best[1], placements=placements)
        tried.append(("local_search", arena_of(buffers, offsets)))
        if tried[-1][1] < arena_of(buffers, best[1]):
            best = ("local_search", offsets)
    if exact is None:
        note = f"CP-SAT not tried: {len(buffers)} buffers > {CPSAT_MAX_BUFFERS}"
        return _result(buffers, best, bound, tried, note)
    return _result(buffers, best, bound, tried, exact.note)


def _result(
    buffers: Sequence[Buffer],
    best: tuple[str, dict[int, int]],
    bound: int,
    tried: list[tuple[str, int]],
    note: str = "",
) -> LayoutResult:
    arena = arena_of(buffers, best[1])
    return LayoutResult(
        MappingProxyType(dict(best[1])), arena, bound, arena <= bound, best[0], tuple(tried), note
    )
