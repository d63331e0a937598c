"""The default layout chooser: the fast greedies first, search only while a gap remains.

Steps:
1. Run the fast greedies (`local_search.GREEDIES`: by size as TFLM, by breadth, by conflicts,
   skyline best fit), keep the smallest arena (the earlier greedy on ties) and stop as soon as
   one reaches the live-bytes lower bound, which no layout can beat.
2. If a gap remains, hill-climb from the best greedy (`local_search.improve`) exactly as
   `--layout local_search` does with the same `time_budget`.
3. If a gap still remains and there are at most `CPSAT_MAX_BUFFERS` buffers, ask CP-SAT exactly
   as `--layout cpsat` does with the same `time_budget` (from the best greedy); it proves
   optimality or returns its best layout. The smallest of the three is kept.
So auto is never above any layout it tried, each step being the named strategy's own call (the
strategy table of `mcugen plan` compares them). Deterministic: every budget is work, never
measured time. Complexity: that of the greedies, O(n (T + n)), when one reaches the bound (all
the real models we have); otherwise the local search's and CP-SAT's budgets, the sum of both.
Weakness: the first greedy at the bound wins, not the one that would fragment least after later
rewrites; above `CPSAT_MAX_BUFFERS` nothing proves optimality (a patch stage's tiles can take
more: mobilenet_v2's 345 buffers, where `--layout cpsat` finds 428,176 bytes against auto's
443,264); CP-SAT does not start from the local search's layout; importing OR-Tools costs about
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
    budget = local_search.DEFAULT_BUDGET if time_budget is None else time_budget
    placements = int(budget * PLACEMENTS_PER_SECOND)
    if placements > 0:  # what --layout local_search does: improve the best greedy
        offsets = improve(buffers, best[1], placements=placements)
        tried.append(("local_search", arena_of(buffers, offsets)))
        if tried[-1][1] < arena_of(buffers, best[1]):
            best = ("local_search", offsets)
        if tried[-1][1] <= bound:
            return _result(buffers, best, bound, tried)
    if time_budget is not None and time_budget <= 0:
        return _result(buffers, best, bound, tried)
    if len(buffers) > CPSAT_MAX_BUFFERS:
        note = f"CP-SAT not tried: {len(buffers)} buffers > {CPSAT_MAX_BUFFERS}"
        return _result(buffers, best, bound, tried, note)
    exact = solve_cpsat(buffers, time_budget=time_budget)  # what --layout cpsat does
    tried.append(("cpsat", exact.arena))
    if exact.arena < arena_of(buffers, best[1]):
        best = ("cpsat", dict(exact.offsets))
    return _result(buffers, best, max(bound, exact.lower_bound), tried, exact.note)


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
