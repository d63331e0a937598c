"""Exact paging with OR-Tools CP-SAT under a deterministic work budget, from the heuristic.

The model, on step intervals (one cell per buffer and step of its lifetime):
1. f[b,s]: b is in fast memory at step s (fixed to 1 where it is used and kernels may not work
   in slow memory); o[b,s]: its offset there, in units of the greatest common divisor of the
   sizes (lossless: dropping every buffer as low as it goes leaves offsets that are sums of
   sizes), inside [0, C - size]; 0 when not in fast memory.
2. At every step, the optional intervals [o, o + size) of the buffers there do not overlap
   (AddNoOverlap per step: the time x address no-overlap of plan/layout/cpsat.py, cut by step).
3. m[b,s]: b moves to another fast offset before s; the offset stays put across a boundary
   where b is in fast memory on both sides and does not move.
4. i[b,s] >= f[b,s] - f[b,s-1], i >= m: a copy in. d[b,s]: after step s the fast copy is newer
   than the slow one: d = f at a write step, else d >= d[b,s-1] + f[b,s] - m[b,s] - 1.
   u[b,s] >= d[b,s-1] - f[b,s], u >= d[b,s-1] + m - 1: a copy out.
5. Minimise sum size x (copy rates x (i, u) + slow access rate x (1 - f) at uses), at most the
   heuristic's cost; the heuristic's cells are the hint.
These are exactly the rules of schedule.schedule_of, so the solution's locations make the
schedule. Deterministic: a fixed seed, interleaved subsolvers (`WORKERS`), CP-SAT's deterministic
time as the budget (interleaved batches overshoot it up to about 3x; `Schedule.work` reports what
was spent); a wall-clock safety net (noted when hit) only stops runaway solves.
Complexity: NP-hard; the model has 6 variables per cell and one no-overlap per step. Above
`MAX_CELLS` cells the heuristic is kept (noted). Weakness: on large graphs the budget ends with the
heuristic or a small improvement and a bound near the solver-independent one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from mcugen.plan.paging.belady import plan_belady
from mcugen.plan.paging.problem import PagedBuffer, PagingProblem
from mcugen.plan.paging.schedule import SLOW, Schedule, schedule_of

#: Deterministic work units (CP-SAT deterministic time) when the caller gives no budget.
DEFAULT_WORK = 0.5
#: Cells (buffer x step of its lifetime) above which no model is built.
MAX_CELLS = 8000
SEED = 0
#: CP-SAT subsolvers, interleaved deterministically (`interleave_search`): the same answer on any
#: machine and load. With one, the search rarely left the heuristic on 50+ operator graphs; with
#: four interleaved (one thread measured: user time = wall time), randwire_ws12 at 1/2 was
#: proven optimal (98.3 -> 90.1 kcycles) within 0.5 units.
WORKERS = 4
#: Seconds after which a solve is stopped whatever the work (a safety net, noted when hit).
SAFETY_SECONDS = 120.0


@dataclass
class _Cells:
    """The variables of one buffer, by step."""

    f: dict[int, Any]
    o: dict[int, Any]
    m: dict[int, Any]
    i: dict[int, Any]
    u: dict[int, Any]
    d: dict[int, Any]


def plan_cpsat(problem: PagingProblem, *, budget: float | None = None) -> Schedule:
    """The best schedule found within `budget` work units (default `DEFAULT_WORK`), with the
    proven bound; the heuristic's when the solver does not improve on it."""
    start = plan_belady(problem)
    if start.proven_optimal:
        return start
    cells = sum(b.last - b.first + 1 for b in problem.buffers)
    if cells > MAX_CELLS:
        return replace(start, note=f"model too large ({cells} cells > {MAX_CELLS}): heuristic kept")
    work = DEFAULT_WORK if budget is None else budget
    if work <= 0:
        return replace(start, note="no work budget: heuristic kept")
    return _solve(problem, start, work)


def _unit(problem: PagingProblem) -> int:
    return math.gcd(*(b.size for b in problem.buffers))


def _solve(problem: PagingProblem, start: Schedule, work: float) -> Schedule:
    from ortools.sat.python import cp_model

    unit = _unit(problem)
    model = cp_model.CpModel()
    cells = {b.id: _cells(model, problem, b, unit) for b in problem.buffers}
    _no_overlap(model, problem, cells, unit)
    terms = _cost_terms(problem, cells)
    objective = sum(coef * var for coef, var in terms)
    model.add(objective <= start.cost)
    model.minimize(objective)
    _hint(model, problem, cells, start, unit)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = WORKERS
    solver.parameters.interleave_search = WORKERS > 1
    # Presolve passes that spent the whole budget on 300-operator models before any search.
    solver.parameters.find_big_linear_overlap = False
    solver.parameters.max_presolve_iterations = 1
    solver.parameters.random_seed = SEED
    solver.parameters.max_deterministic_time = work
    solver.parameters.max_time_in_seconds = SAFETY_SECONDS
    status = solver.solve(model)
    spent = solver.deterministic_time
    note = (
        "wall-clock safety net hit: may differ elsewhere; "
        if solver.wall_time >= SAFETY_SECONDS
        else ""
    )
    if status == cp_model.INFEASIBLE:  # the heuristic's cost cannot be beaten
        return replace(
            start,
            lower_bound=start.cost,
            proven_optimal=True,
            work=spent,
            note=note + "heuristic proven optimal",
        )
    bound = max(start.lower_bound, math.ceil(solver.best_objective_bound - 1e-6))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return replace(
            start, lower_bound=bound, work=spent, note=note + "work budget spent: heuristic kept"
        )
    timeline = {
        b.id: tuple(
            unit * solver.value(cells[b.id].o[s]) if solver.value(cells[b.id].f[s]) else SLOW
            for s in range(b.first, b.last + 1)
        )
        for b in problem.buffers
    }
    proven = status == cp_model.OPTIMAL
    found = schedule_of(
        problem,
        timeline,
        strategy="cpsat",
        lower_bound=bound,
        proven_optimal=proven,
        work=spent,
        note=note + ("" if proven else "work budget spent: gap open"),
    )
    if proven:
        found = replace(found, lower_bound=found.cost)
    if found.cost < start.cost:
        return found
    return replace(
        start,
        lower_bound=found.lower_bound,
        proven_optimal=found.proven_optimal,
        work=spent,
        note=found.note,
    )


def _cells(model: Any, problem: PagingProblem, b: PagedBuffer, unit: int) -> _Cells:
    """The variables and transition constraints of one buffer (items 1, 3 and 4)."""
    top = (problem.capacity - b.size) // unit
    c = _Cells({}, {}, {}, {}, {}, {})
    for s in range(b.first, b.last + 1):
        c.f[s] = model.new_bool_var(f"f{b.id}_{s}")
        c.o[s] = model.new_int_var(0, max(top, 0), f"o{b.id}_{s}")
        c.d[s] = model.new_bool_var(f"d{b.id}_{s}")
        model.add(c.o[s] == 0).only_enforce_if(~c.f[s])
        if top < 0:
            model.add(c.f[s] == 0)
        if problem.must_be_fast(b, s):
            model.add(c.f[s] == 1)
        model.add(c.d[s] <= c.f[s])
        if s in b.writes:
            model.add(c.d[s] == c.f[s])
        if s == b.first:
            continue
        p = s - 1
        c.m[s] = model.new_bool_var(f"m{b.id}_{s}")
        c.i[s] = model.new_bool_var(f"i{b.id}_{s}")
        c.u[s] = model.new_bool_var(f"u{b.id}_{s}")
        model.add(c.m[s] <= c.f[s])
        model.add(c.m[s] <= c.f[p])
        model.add(c.o[s] == c.o[p]).only_enforce_if([c.f[s], c.f[p], ~c.m[s]])
        model.add(c.i[s] >= c.f[s] - c.f[p])
        model.add(c.i[s] >= c.m[s])
        model.add(c.u[s] >= c.d[p] - c.f[s])
        model.add(c.u[s] >= c.d[p] + c.m[s] - 1)
        if s not in b.writes:
            model.add(c.d[s] >= c.d[p] + c.f[s] - c.m[s] - 1)
    return c


def _no_overlap(model: Any, problem: PagingProblem, cells: dict[int, _Cells], unit: int) -> None:
    """Item 2: per step, the fast buffers' address intervals are disjoint."""
    by_step: dict[int, list[Any]] = {}
    for b in problem.buffers:
        for s in range(b.first, b.last + 1):
            c = cells[b.id]
            interval = model.new_optional_fixed_size_interval_var(
                c.o[s], b.size // unit, c.f[s], f"x{b.id}_{s}"
            )
            by_step.setdefault(s, []).append(interval)
    for s in sorted(by_step):
        if len(by_step[s]) > 1:
            model.add_no_overlap(by_step[s])


def _cost_terms(problem: PagingProblem, cells: dict[int, _Cells]) -> list[tuple[int, Any]]:
    """Item 5, as (coefficient, literal or 1 - literal) pairs; a constant term never arises."""
    cost = problem.cost
    terms: list[tuple[int, Any]] = []
    for b in problem.buffers:
        c = cells[b.id]
        for s in c.i:
            terms.append((b.size * cost.in_per_byte, c.i[s]))
            terms.append((b.size * cost.out_per_byte, c.u[s]))
        if cost.slow_per_byte is not None:
            for s in b.uses:
                terms.append((b.size * cost.slow_per_byte, 1 - c.f[s]))
    return terms


def _hint(
    model: Any, problem: PagingProblem, cells: dict[int, _Cells], start: Schedule, unit: int
) -> None:
    """The heuristic's schedule as a complete hint (following the rules of schedule_of)."""
    timeline = start.timeline()
    for b in problem.buffers:
        c, places = cells[b.id], timeline[b.id]
        dirty = False
        for k, s in enumerate(range(b.first, b.last + 1)):
            where, prev = places[k], places[k - 1] if k else None
            inside = where != SLOW
            model.add_hint(c.f[s], inside)
            model.add_hint(c.o[s], where // unit if inside and where % unit == 0 else 0)
            if prev is not None:
                moved = inside and prev != SLOW and where != prev
                model.add_hint(c.m[s], moved)
                model.add_hint(c.i[s], inside and where != prev)
                model.add_hint(c.u[s], dirty and prev != SLOW and where != prev)
            if where != prev:
                dirty = False
            if s in b.writes:
                dirty = inside
            model.add_hint(c.d[s], dirty)
