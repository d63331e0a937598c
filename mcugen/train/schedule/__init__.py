"""Training schedules: what stays in RAM, what is recomputed, what is paged to slow storage and
back, under a RAM budget and a time budget, at the least energy or time (POET).

A scheduler is a pure function `plan(problem, budgets) -> Schedule` chosen by name:
- `store_all`: every value kept from its computation to its last reader (the baseline);
- `greedy`: Capuchin-style, from store-all, one value at a time (baselines.py);
- `remat`: the exact model with recomputation only (Checkmate's space);
- `paging`: the exact model with paging only;
- `poet` (default): the exact model with both (cpsat.py), warm-started from the greedy schedule.
`program.py` defines what a schedule does; `validate` re-checks any schedule against it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from mcugen.registry import Registry
from mcugen.train.schedule import cpsat
from mcugen.train.schedule.baselines import greedy, ruin_and_recreate, store_all
from mcugen.train.schedule.bound import EFFORTS, lower_bound, small
from mcugen.train.schedule.problem import Budgets, Node, ScheduleError, ScheduleProblem
from mcugen.train.schedule.program import (
    Outcome,
    Schedule,
    ScheduleInvalid,
    Stage,
    simulate,
    validate,
)

__all__ = [
    "DEFAULT",
    "SCHEDULERS",
    "Budgets",
    "Node",
    "Outcome",
    "Schedule",
    "ScheduleError",
    "ScheduleInvalid",
    "ScheduleProblem",
    "Stage",
    "simulate",
    "validate",
]


class Scheduler(Protocol):
    def __call__(self, problem: ScheduleProblem, budgets: Budgets) -> Schedule: ...


SCHEDULERS: Registry[Scheduler] = Registry("scheduler", default="poet")
DEFAULT = SCHEDULERS.default


@SCHEDULERS.register("store_all")
def _store_all(problem: ScheduleProblem, budgets: Budgets) -> Schedule:
    schedule = replace(store_all(problem), lower_bound=lower_bound(problem, budgets.ram))
    _check(problem, schedule, budgets)
    return schedule


@SCHEDULERS.register("greedy")
def _greedy(problem: ScheduleProblem, budgets: Budgets) -> Schedule:
    schedule = replace(greedy(problem, budgets.ram), lower_bound=lower_bound(problem, budgets.ram))
    _check(problem, schedule, budgets)
    return schedule


def _exact(name: str, *, remat: bool, paging: bool) -> Scheduler:
    def plan(problem: ScheduleProblem, budgets: Budgets) -> Schedule:
        # the bound in steps (bound.EFFORTS), each only when the ones before do not prove the
        # start close enough: on 300 nodes the knapsack takes 0.1 s, the relaxation 3 s
        efforts = list(EFFORTS)
        floor = lower_bound(problem, budgets.ram, efforts.pop(0))

        def within(cost: int) -> bool:
            return floor is not None and cost - floor <= budgets.gap * cost

        def close(schedule: Schedule | None) -> bool:
            return schedule is not None and within(simulate(problem, schedule).cost)

        def finish(hint: Schedule) -> Schedule:
            # the start, with the bound that does not need the solver: its every step when they
            # are quick (whether the schedule is proven optimal)
            nonlocal floor
            if small(problem, budgets.ram) and efforts:
                floor = lower_bound(problem, budgets.ram, efforts[-1])
            cost = simulate(problem, hint).cost
            optimal = floor is not None and cost <= floor
            return replace(hint, solver=name, lower_bound=floor, optimal=optimal)

        large = cpsat.booleans(problem, remat=remat, paging=paging) > budgets.size
        greedy_start = _greedy_start(problem, budgets, remat=remat, paging=paging)
        hint = greedy_start[0] if greedy_start is not None else None
        while efforts and not close(hint):
            floor = lower_bound(problem, budgets.ram, efforts.pop(0))
        if greedy_start is not None and not close(hint) and budgets.ram is not None:
            start, again, capped = greedy_start
            ruined = ruin_and_recreate(
                _allowed_problem(problem, paging),
                budgets.ram,
                start,
                recompute=again,
                capped=capped,
                runs=RUINS,
                enough=within,
            )
            if _allowed(simulate(problem, ruined), budgets, remat=remat, paging=paging):
                hint = ruined
        if hint is not None and (close(hint) or large):
            return finish(hint)
        work = budgets.work
        if remat and paging and problem.paging and hint is None:
            # no heuristic start: the exact paging-only and recomputation-only ones, with half
            # the work (a greedy start, improved, gives CP-SAT a better start sooner)
            hint = _exact_start(problem, budgets, floor)
            work /= 2
            if hint is not None and (close(hint) or large):
                return finish(hint)
        if efforts:  # CP-SAT starts from the best bound
            floor = lower_bound(problem, budgets.ram, efforts[-1])
        options = cpsat.Options(
            budgets.ram, budgets.time, remat, paging, work, hint, floor, budgets.gap
        )
        try:
            schedule = cpsat.plan_cpsat(problem, options, name)
        except ScheduleError:
            if hint is None:
                raise
            # the work ran out before CP-SAT took its start (a valid start means a schedule
            # exists): the start, with the bound that does not need the solver
            return replace(hint, solver=name, lower_bound=floor, optimal=False)
        if hint is not None and simulate(problem, hint).cost < simulate(problem, schedule).cost:
            # CP-SAT stopped before it reached its own start: keep the start, with the bound
            return replace(hint, solver=name, lower_bound=schedule.lower_bound, optimal=False)
        return schedule

    return plan


#: Greedy runs of ruin and recreate (each 0.05 to 0.3 s on 100 nodes)
RUINS = 24


def _allowed_problem(problem: ScheduleProblem, paging: bool) -> ScheduleProblem:
    """The problem the greedy sees: without its slow memory when paging is not allowed."""
    return problem if paging else replace(problem, page_out_cost=None, page_in_cost=None)


def _greedy_start(
    problem: ScheduleProblem, budgets: Budgets, *, remat: bool, paging: bool
) -> tuple[Schedule, bool, bool] | None:
    """The cheapest valid greedy schedule (joint and paging only, each with bytes past the excess
    counted or not) with the greedy's settings (recompute, capped); None when none meets the
    budgets."""
    plain = _allowed_problem(problem, paging)
    starts: list[tuple[int, int, tuple[Schedule, bool, bool]]] = []
    for again in (remat, False) if remat and plain.paging else (remat,):
        for capped in (True, False):
            try:
                schedule = greedy(plain, budgets.ram, recompute=again, capped=capped)
            except ScheduleError:
                continue
            outcome = simulate(problem, schedule)
            if _allowed(outcome, budgets, remat=remat, paging=paging):
                starts.append((outcome.cost, len(starts), (schedule, again, capped)))
    return min(starts)[2] if starts else None


def _exact_start(problem: ScheduleProblem, budgets: Budgets, floor: int | None) -> Schedule | None:
    """The cheaper of the exact paging-only and recomputation-only schedules (a quarter of the
    work each; `floor`, the joint bound, bounds them too), None when neither is found."""
    found: list[tuple[int, int, Schedule]] = []
    for only_remat in (False, True):
        options = cpsat.Options(
            budgets.ram, budgets.time, only_remat, not only_remat, budgets.work / 4, floor=floor
        )
        try:
            schedule = cpsat.plan_cpsat(problem, options, "start")
        except ScheduleError:
            continue
        outcome = simulate(problem, schedule)
        if _allowed(outcome, budgets, remat=True, paging=True):
            found.append((outcome.cost, len(found), schedule))
    return min(found)[2] if found else None


def _allowed(outcome: Outcome, budgets: Budgets, *, remat: bool, paging: bool) -> bool:
    """The outcome meets the budgets and uses only the ways allowed."""
    fits = budgets.ram is None or outcome.peak <= budgets.ram
    quick = budgets.time is None or outcome.time <= budgets.time
    uses = (remat or outcome.recomputed == 0) and (paging or outcome.paged_out == 0)
    return fits and quick and uses


SCHEDULERS.add("remat", _exact("remat", remat=True, paging=False))
SCHEDULERS.add("paging", _exact("paging", remat=False, paging=True))
SCHEDULERS.add("poet", _exact("poet", remat=True, paging=True))


def _check(problem: ScheduleProblem, schedule: Schedule, budgets: Budgets) -> None:
    """A heuristic schedule over a budget is a user error naming the budget."""
    outcome = simulate(problem, schedule)
    if budgets.ram is not None and outcome.peak > budgets.ram:
        raise ScheduleError(
            f"the {schedule.solver} schedule needs {outcome.peak} bytes, over the RAM budget "
            f"of {budgets.ram}",
            hint="raise --ram-budget or choose the poet scheduler",
        )
    if budgets.time is not None and outcome.time > budgets.time:
        raise ScheduleError(
            f"the {schedule.solver} schedule takes {outcome.time} cycles, over the time budget "
            f"of {budgets.time}",
            hint="raise --time-budget",
        )
