"""Exact paging with OR-Tools CP-SAT under a deterministic work budget, from the heuristic.

Steps:
1. The heuristic (belady.py) gives the incumbent; when it meets the lower bound, done.
2. Graphs of `WINDOW` steps or more: large neighbourhood search by windows of steps, the
   model (cpmodel.py) of `WINDOW` steps with everything outside fixed to the incumbent, solved
   for each window in step order (half-overlapping), a window's answer kept when the whole
   schedule, re-derived by schedule.schedule_of, costs less. Windows where the incumbent pays
   nothing are skipped. All the budget above `FULL_CELLS` cells, else 1 - `FULL_SHARE` of it.
3. Up to `FULL_CELLS` cells (buffer x step of its life), the whole model is solved with the
   incumbent as hint and its cost as a cap: an optimal answer is proven optimal, and the
   solver's bound joins bound.py's.
Deterministic: a fixed seed, interleaved subsolvers (`WORKERS`), CP-SAT's deterministic time as
the budget (interleaved batches overshoot it up to about 3x; `Schedule.work` reports what was
spent); a wall-clock safety net (noted when hit) only stops runaway solves.
Complexity: NP-hard; the model has 6 variables per cell and one no-overlap per step; a window
model is bounded by the buffers alive in `WINDOW` + 2 steps. Weakness: windows cannot trade a copy
inside them against one far outside; on large graphs the gap to the bound may stay open.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from mcugen.plan.paging.belady import plan_belady
from mcugen.plan.paging.cpmodel import PagingModel, build
from mcugen.plan.paging.problem import PagingProblem
from mcugen.plan.paging.schedule import SLOW, Schedule, Timeline, schedule_of
from mcugen.plan.solver import solve

#: Deterministic work units (CP-SAT deterministic time) when the caller gives no budget.
DEFAULT_WORK = 0.5
#: Cells (buffer x step of its lifetime) up to which the whole model is solved first.
FULL_CELLS = 3000
#: Share of the budget for the whole model when windows come first.
FULL_SHARE = 0.6
#: Steps per window of the neighbourhood search; windows start every WINDOW // 2 steps.
WINDOW = 16
SEED = 0
#: CP-SAT subsolvers, interleaved deterministically (`interleave_search`): the same answer on any
#: machine and load. With one, the search rarely left the heuristic on 50+ operator graphs; with
#: four interleaved (one thread measured: user time = wall time), randwire_ws12 at 1/2 was
#: proven optimal (98.3 -> 90.1 kcycles) within 0.5 units.
WORKERS = 4
#: A window's model is small: one worker settles it with far less work (randwire_ws72: the same
#: schedules in 4.5 s instead of 11).
WINDOW_WORKERS = 1
#: Seconds after which a solve is stopped whatever the work (a safety net, noted when hit).
SAFETY_SECONDS = 120.0


def plan_cpsat(problem: PagingProblem, *, budget: float | None = None) -> Schedule:
    """The best schedule found within `budget` work units (default `DEFAULT_WORK`), with the
    proven bound, validated; the heuristic's when the solver does not improve on it."""
    best = plan_belady(problem)
    work = DEFAULT_WORK if budget is None else budget
    if best.proven_optimal or work <= 0:
        return best if work > 0 else replace(best, note="no work budget: heuristic kept")
    cells = sum(b.last - b.first + 1 for b in problem.buffers)
    if problem.steps >= WINDOW:
        share = work if cells > FULL_CELLS else work * (1 - FULL_SHARE)
        best = _solve_windows(problem, best, share)
        work -= share
    if cells <= FULL_CELLS and not best.proven_optimal:
        best = _solve_whole(problem, best, work)
    best.validate(problem)
    return best


def _unit(problem: PagingProblem, incumbent: Timeline) -> int:
    """The offset grid: the sizes' greatest common divisor, refined to hold the incumbent."""
    offsets = {o for places in incumbent.values() for o in places if o != SLOW}
    return math.gcd(*(b.size for b in problem.buffers), *offsets)


def _run(pm: PagingModel, work: float, workers: int = WORKERS) -> tuple[Any, Any, float, str]:
    """Solve; (status, solver, work spent, note)."""
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.interleave_search = workers > 1
    # Presolve passes that spent the whole budget on 300-operator models before any search.
    solver.parameters.find_big_linear_overlap = False
    solver.parameters.max_presolve_iterations = 1
    solver.parameters.random_seed = SEED
    solver.parameters.max_deterministic_time = work
    solver.parameters.max_time_in_seconds = SAFETY_SECONDS
    status = solve(solver, pm.model)
    late = solver.wall_time >= SAFETY_SECONDS
    note = "wall-clock safety net hit: may differ elsewhere" if late else ""
    return status, solver, solver.deterministic_time, note


def _solve_whole(problem: PagingProblem, start: Schedule, work: float) -> Schedule:
    """Step 3 of the module docstring."""
    from ortools.sat.python import cp_model

    incumbent = start.timeline()
    pm = build(problem, _unit(problem, incumbent), incumbent)
    objective = pm.objective()
    pm.model.add(objective <= start.cost)
    pm.model.minimize(objective)
    status, solver, spent, note = _run(pm, work)
    bound = start.lower_bound
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = max(bound, math.ceil(solver.best_objective_bound - 1e-6))
    spent += start.work
    if status != cp_model.OPTIMAL and status != cp_model.FEASIBLE:
        return replace(
            start, lower_bound=bound, work=spent, note=_join(note, start.note, "gap open")
        )
    timeline = {b.id: tuple(pm.timeline_part(solver, b).values()) for b in problem.buffers}
    found = schedule_of(problem, timeline, strategy="cpsat", lower_bound=bound, work=spent)
    proven = status == cp_model.OPTIMAL
    best = found if found.cost < start.cost else replace(start, work=spent)
    if proven:
        return replace(
            best, lower_bound=best.cost, proven_optimal=True, note=_join(note, start.note)
        )
    return replace(best, lower_bound=bound, note=_join(note, start.note, "gap open"))


def _solve_windows(problem: PagingProblem, best: Schedule, work: float) -> Schedule:
    """Step 2 of the module docstring."""
    from ortools.sat.python import cp_model

    windows = [
        (lo, min(lo + WINDOW - 1, problem.steps)) for lo in range(0, problem.steps + 1, WINDOW // 2)
    ]
    spent, kept, note = best.work, 0, best.note
    share = work / len(windows)
    for lo, hi in windows:
        paid = _paid_in(problem, best, lo, hi)
        if paid == 0:
            continue
        incumbent = best.timeline()
        pm = build(problem, _unit(problem, incumbent), incumbent, lo, hi)
        objective = pm.objective()
        pm.model.add(objective <= paid)
        pm.model.minimize(objective)
        status, solver, used, late = _run(pm, share, WINDOW_WORKERS)
        spent += used
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            continue
        merged = dict(incumbent)
        for b_id in pm.cells:
            b = problem.index[b_id]
            places = list(incumbent[b_id])
            for s, where in pm.timeline_part(solver, b).items():
                places[s - b.first] = where
            merged[b_id] = tuple(places)
        found = schedule_of(
            problem, merged, strategy="cpsat", lower_bound=best.lower_bound, work=spent
        )
        if found.cost < best.cost:
            best, kept = found, kept + 1
        note = _join(late, note)
    note = _join(note, f"{kept} windows improved")
    return replace(best, work=spent, proven_optimal=best.cost <= best.lower_bound, note=note)


def _join(*notes: str) -> str:
    """Notes joined by "; ", empty ones and trailing separators left out."""
    return "; ".join(n.strip("; ") for n in notes if n.strip("; "))


def _paid_in(problem: PagingProblem, schedule: Schedule, lo: int, hi: int) -> int:
    """Millicycles the schedule pays at the boundaries lo..hi + 1 and the steps lo..hi."""
    cost = problem.cost
    paid = 0
    for c in schedule.copies:
        if lo <= c.step <= hi + 1:
            rate = cost.in_per_byte if c.direction == "in" else cost.out_per_byte
            paid += c.bytes * rate
    slow = cost.slow_per_byte or 0
    for e in schedule.episodes:
        if e.memory == "slow" and e.first <= hi and e.last >= lo:
            b = problem.index[e.buffer]
            uses = [s for s in b.uses if max(lo, e.first) <= s <= min(hi, e.last)]
            paid += b.size * slow * len(uses)
    return paid
