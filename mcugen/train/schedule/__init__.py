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
from mcugen.train.schedule.baselines import greedy, store_all
from mcugen.train.schedule.bound import lower_bound
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
        floor = lower_bound(problem, budgets.ram)
        large = cpsat.booleans(problem, remat=remat, paging=paging) > budgets.size
        hint = None
        for exact in (False, True):
            found = _start(problem, budgets, floor, remat=remat, paging=paging, exact=exact)
            if found is not None and (
                hint is None or simulate(problem, found).cost < simulate(problem, hint).cost
            ):
                hint = found
            if hint is None:
                continue
            cost = simulate(problem, hint).cost
            if floor is not None and cost - floor <= budgets.gap * cost or large:
                # within the gap already, or too large for the exact model: the start, with
                # the bound that does not need the solver
                optimal = floor is not None and cost <= floor
                return replace(hint, solver=name, lower_bound=floor, optimal=optimal)
            if not (remat and paging and problem.paging):
                break  # no exact starts for the restricted models
        work = budgets.work / 2 if hint is not None and remat and paging else budgets.work
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


def _start(
    problem: ScheduleProblem,
    budgets: Budgets,
    floor: int | None,
    *,
    remat: bool,
    paging: bool,
    exact: bool,
) -> Schedule | None:
    """A valid schedule to start from, or None when none meets the budgets: the cheapest of the
    greedy ones (joint and paging only, each with bytes past the excess counted or not) or, with
    `exact`, of the exact paging-only and recomputation-only ones (a quarter of the work each;
    for the joint model; `floor`, the joint bound, bounds them too)."""
    starts = []
    if not exact:
        plain = problem if paging else replace(problem, page_out_cost=None, page_in_cost=None)
        for again in (remat, False) if remat and plain.paging else (remat,):
            for capped in (True, False):
                try:
                    starts.append(greedy(plain, budgets.ram, recompute=again, capped=capped))
                except ScheduleError:
                    pass
    elif remat and paging and problem.paging:
        for only_remat in (False, True):
            options = cpsat.Options(
                budgets.ram, budgets.time, only_remat, not only_remat, budgets.work / 4, floor=floor
            )
            try:
                starts.append(cpsat.plan_cpsat(problem, options, "start"))
            except ScheduleError:
                pass
    valid = []
    for s in starts:
        outcome = simulate(problem, s)
        fits = budgets.ram is None or outcome.peak <= budgets.ram
        quick = budgets.time is None or outcome.time <= budgets.time
        uses = (remat or outcome.recomputed == 0) and (paging or outcome.paged_out == 0)
        if fits and quick and uses:
            valid.append((outcome.cost, s.solver, s))
    return min(valid, key=lambda x: x[:2])[2] if valid else None


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
