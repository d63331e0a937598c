"""Exact arena layout with OR-Tools CP-SAT, time-limited.

The model (dynamic storage allocation as a constraint program):
1. Offsets live on a grid: `unit` is the greatest common divisor of the buffer sizes rounded up to
   the alignment. This loses nothing: dropping every buffer as low as it goes turns any layout into
   one no higher whose offsets are 0 or the aligned end of another buffer, so multiples of `unit`.
   One integer variable per buffer, its offset in units, bounded by the best greedy arena.
2. For every step whose live set is maximal (a maximal clique of the interval graph of lifetimes),
   the offset intervals of its live buffers must not overlap (AddNoOverlap). Two buffers share a
   step exactly when they share a maximal clique, so this is the whole no-overlap condition.
3. The arena is at least every buffer's end and at least the live-bytes lower bound.
4. Identical buffers (same lifetime, size and alignment) are ordered by id (symmetry breaking).
5. Solve in two phases: first fix the arena to the live-bytes lower bound (a feasibility question
   that CP-SAT settles 10-100 times faster than the minimisation, and the usual answer), then, if
   that is infeasible or undecided, minimise the arena between the bound and the best greedy,
   with the best greedy layout as a hint. Return the best layout and the proven lower bound.
Deterministic: one worker, a fixed seed, and CP-SAT's deterministic time limit (see
`WORK_PER_SECOND`). The wall-clock limit is only a safety net against a runaway solve, far above
what the deterministic limit takes on a loaded machine; a solve it stops says so in its note
(`CLOCK_NOTE`), since such a layout may not reproduce.
Complexity: NP-hard in general; small and medium models (tens of buffers) are proven optimal in
milliseconds to seconds. Weakness: large models may end at the time limit with the best layout
found and an unclosed gap, and OR-Tools must be installed. Optimality is exact when all buffers
share one alignment (always the case for arena buffers, 16 bytes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mcugen.plan.buffers import Buffer
from mcugen.plan.layout.placement import align_to, arena_of, live_lower_bound
from mcugen.plan.solver import solve

#: Budget in seconds when the caller gives none.
DEFAULT_BUDGET = 2.0
SEED = 0
#: Share of the budget for the first question: is there a layout at the live-bytes lower bound?
FEASIBILITY_SHARE = 0.6
#: CP-SAT deterministic work units per second of budget. One unit took 7-65 wall-clock seconds on
#: layout models of 80-1000 buffers (2-core x86 VM under load), so the deterministic limit, which
#: keeps re-runs identical, normally stops the search; the wall-clock limit is a safety net.
#: Much smaller limits starve the search: 0.002 units left a 79-buffer model undecided that
#: 0.003 settled in 20 ms.
WORK_PER_SECOND = 0.05
#: The wall-clock safety net: `SAFETY_FLOOR` plus `SAFETY_FACTOR` times the budget. The earlier net
#: of three times the budget (at 65 s a unit, the deterministic limit alone takes 3.25 times the
#: budget) is the suspected cause of a CI failure where a random graph's plan differed between
#: two runs of the same call on a loaded machine (not reproduced here).
SAFETY_FLOOR = 10.0
SAFETY_FACTOR = 100.0
CLOCK_NOTE = (
    "the layout search was stopped by its wall-clock safety net, not its work limit: "
    "this plan may differ on a re-run"
)


@dataclass(frozen=True)
class CpSatLayout:
    offsets: Mapping[int, int]
    arena: int
    lower_bound: int  # no layout of these buffers is smaller
    proven_optimal: bool
    status: str  # "optimal", "feasible", "at live bound", "no solution: greedy kept", ...
    start: Mapping[int, int] = field(default_factory=dict)
    note: str = ""  # `CLOCK_NOTE` when the wall clock, not the work limit, ended a search


#: One rectangle of a buffer: (buffer id, segment number, first step, last step, bytes).
_Piece = tuple[int, int, int, int, int]


def _pieces(buffers: Sequence[Buffer]) -> list[_Piece]:
    """The rectangles to keep apart: one per buffer, or one per segment of a profiled buffer
    (all at the buffer's offset)."""
    return [
        (b.id, k, first, last, size)
        for b in buffers
        for k, (first, last, size) in enumerate(b.segments())
        if size > 0
    ]


def _maximal_live_sets(pieces: Sequence[_Piece]) -> list[list[_Piece]]:
    """The live sets of the steps that are not contained in another step's live set."""
    events = sorted({p[2] for p in pieces})
    sets = [[p for p in pieces if p[2] <= s <= p[3]] for s in events]
    ids = [frozenset(p[:2] for p in group) for group in sets]
    return [g for g, key in zip(sets, ids, strict=True) if not any(key < other for other in ids)]


def _grid_unit(buffers: Sequence[Buffer]) -> int:
    align = math.lcm(*(b.align for b in buffers))
    return math.gcd(*(align_to(size, align) for b in buffers for _, _, size in b.segments()))


def _build(
    buffers: Sequence[Buffer],
    unit: int,
    bounds: tuple[int, int],
    start: Mapping[int, int] | None,
) -> tuple[Any, dict[int, Any]]:
    from ortools.sat.python import cp_model

    lower, upper = bounds
    model = cp_model.CpModel()
    arena = model.new_int_var(lower, upper, "arena")
    offset = {}
    for b in buffers:
        offset[b.id] = model.new_int_var(0, (upper - b.size) // unit, f"x{b.id}")
        model.add(unit * offset[b.id] + b.size <= arena)
        if start is not None and start[b.id] % unit == 0:
            model.add_hint(offset[b.id], start[b.id] // unit)
    pieces = _pieces(buffers)
    interval = {
        p[:2]: model.new_fixed_size_interval_var(offset[p[0]], -(-p[4] // unit), f"i{p[0]}_{p[1]}")
        for p in pieces
    }
    for group in _maximal_live_sets(pieces):
        model.add_no_overlap([interval[p[:2]] for p in group])
    twins: dict[tuple[int, int, int, int], Buffer] = {}
    for b in sorted(buffers, key=lambda b: b.id):
        if b.profile:
            continue  # symmetry breaking below is for interchangeable plain buffers
        key = (b.first, b.last, b.size, b.align)
        if key in twins:
            model.add(offset[twins[key].id] + -(-b.size // unit) <= offset[b.id])
        twins[key] = b
    model.minimize(arena)
    return model, offset


def _run(
    buffers: Sequence[Buffer],
    unit: int,
    bounds: tuple[int, int],
    start: Mapping[int, int] | None,
    seconds: float,
) -> tuple[str, dict[int, int] | None, int, bool]:
    """One CP-SAT solve with the arena in `bounds`: (status, offsets or None, proven bound,
    whether the wall-clock safety net rather than the work limit ended an unfinished search)."""
    from ortools.sat.python import cp_model

    model, offset = _build(buffers, unit, bounds, start)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = SEED
    solver.parameters.max_deterministic_time = seconds * WORK_PER_SECOND
    solver.parameters.max_time_in_seconds = SAFETY_FLOOR + SAFETY_FACTOR * seconds
    status = solve(solver, model)
    clocked = solver.wall_time >= solver.parameters.max_time_in_seconds
    if status == cp_model.INFEASIBLE:
        return "infeasible", None, bounds[1] + 1, False
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "unknown", None, bounds[0], clocked
    offsets = {b.id: unit * solver.value(offset[b.id]) for b in buffers}
    # CP-SAT reports an integer bound in floating point (51.00000000000001): not 52
    bound = max(bounds[0], math.ceil(solver.best_objective_bound - 1e-6))
    if status == cp_model.OPTIMAL:
        return "optimal", offsets, bound, False
    return "feasible", offsets, bound, clocked


def solve_cpsat(
    buffers: Sequence[Buffer],
    *,
    time_budget: float | None = None,
    start: Mapping[int, int] | None = None,
) -> CpSatLayout:
    """Minimise the arena of `buffers`; `start` (default: the best greedy) is the fallback.

    First asks for a layout of exactly the live-bytes lower bound (a feasibility problem, often
    10-100 times faster to settle than the minimisation), then, if that is infeasible or
    undecided, minimises with the rest of the budget."""
    if start is None:
        from mcugen.plan.layout.local_search import best_greedy

        start = best_greedy(buffers)[1]
    start = MappingProxyType(dict(start))
    lower, upper = live_lower_bound(buffers), arena_of(buffers, start)
    if upper <= lower:
        return CpSatLayout(start, upper, lower, True, "at live bound", start)
    budget = DEFAULT_BUDGET if time_budget is None else time_budget
    if budget <= 0:
        return CpSatLayout(start, upper, lower, False, "no budget: greedy kept", start)
    sized = [b for b in buffers if b.size > 0]
    unit = _grid_unit(sized)
    exact = len({b.align for b in sized}) == 1
    status, found, bound, clocked = _run(
        sized, unit, (lower, lower), None, budget * FEASIBILITY_SHARE
    )
    if found is None:
        if status == "infeasible" and exact:
            lower = bound
        seconds = budget * (1 - FEASIBILITY_SHARE)
        status, found, bound, again = _run(sized, unit, (lower, upper), start, seconds)
        clocked = clocked or again
    note = CLOCK_NOTE if clocked else ""
    if found is None:
        return CpSatLayout(start, upper, lower, False, "no solution: greedy kept", start, note)
    offsets = {b.id: 0 for b in buffers} | found
    arena = arena_of(buffers, offsets)
    bound = max(lower, bound) if exact else live_lower_bound(buffers)
    return CpSatLayout(MappingProxyType(offsets), arena, bound, arena <= bound, status, start, note)
