"""The default layout chooser: the fast greedies first, search only while a gap remains.

Steps:
1. Run the fast greedies (`local_search.GREEDIES`: by size as TFLM, by breadth, by conflicts,
   skyline best fit), keep the smallest arena (the earlier greedy on ties) and stop as soon as
   one reaches the live-bytes lower bound, which no layout can beat.
2. If a gap remains, hill-climb from the best greedy (`local_search.improve`) with
   `LOCAL_SEARCH_SHARE` of the budget.
3. If a gap still remains and there are at most `CPSAT_MAX_BUFFERS` buffers, ask CP-SAT with the
   rest of the budget; it proves optimality or returns its best layout (never worse than its
   start).
Deterministic: every budget is a fixed share of `time_budget`, never measured time.
Complexity: that of the greedies, O(n (T + n)), when one reaches the bound (all the real models
we have); otherwise bounded by the budget. Weakness: the first greedy at the bound wins, not the
one that would fragment least after later rewrites; above `CPSAT_MAX_BUFFERS` nothing proves
optimality, and importing OR-Tools costs about half a second the first time.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from mcugen.plan.buffers import Buffer
from mcugen.plan.layout.cpsat import solve_cpsat
from mcugen.plan.layout.local_search import GREEDIES, PLACEMENTS_PER_SECOND, improve
from mcugen.plan.layout.placement import LayoutResult, arena_of, live_lower_bound

DEFAULT_BUDGET = 0.5
LOCAL_SEARCH_SHARE = 0.2
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
    budget = DEFAULT_BUDGET if time_budget is None else time_budget
    placements = int(budget * LOCAL_SEARCH_SHARE * PLACEMENTS_PER_SECOND)
    if placements > 0:
        offsets = improve(buffers, best[1], placements=placements)
        tried.append(("local_search", arena_of(buffers, offsets)))
        if tried[-1][1] < arena_of(buffers, best[1]):
            best = ("local_search", offsets)
        if tried[-1][1] <= bound:
            return _result(buffers, best, bound, tried)
    if len(buffers) > CPSAT_MAX_BUFFERS or budget <= 0:
        return _result(buffers, best, bound, tried)
    exact = solve_cpsat(buffers, time_budget=budget * (1 - LOCAL_SEARCH_SHARE), start=best[1])
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
