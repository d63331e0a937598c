"""Schedules without a solver: store-all (every value kept in RAM from its computation to its
last reader, nothing recomputed or paged: what `mcugen train` runs without a budget) and a
greedy heuristic in the manner of Capuchin (Peng et al., ASPLOS 2020): from store-all, while the
peak is over the budget, take the value resident at the peak stage that no node of that stage
reads and that frees the most bytes per unit of added cost, and either page it out after its
last read before the peak and in before its next read, or drop it and recompute it (its inputs
must then be resident) before its next read, whichever costs less. O(iterations x stages x
nodes). Weakness: one value at a time, never undone; it may stop over the budget where the exact
model (cpsat.py) finds a schedule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from mcugen.train.schedule.problem import ScheduleError, ScheduleProblem
from mcugen.train.schedule.program import (
    Outcome,
    Schedule,
    ScheduleInvalid,
    Stage,
    simulate,
)


def last_readers(problem: ScheduleProblem) -> list[int]:
    """Per node, the last stage that reads it (len(nodes) for an output, its own when none)."""
    n = len(problem.nodes)
    last = list(range(n))
    for i, users in enumerate(problem.consumers):
        if users:
            last[i] = users[-1]
        if problem.nodes[i].output:
            last[i] = n
    return last


def store_all(problem: ScheduleProblem) -> Schedule:
    n = len(problem.nodes)
    last = last_readers(problem)
    stages = tuple(
        Stage((t,), keep=frozenset(i for i in range(t + 1) if last[i] > t)) for t in range(n)
    )
    return Schedule(stages, "store_all")


def greedy(problem: ScheduleProblem, ram_budget: int | None, *, recompute: bool = True) -> Schedule:
    """The heuristic above (paging only when the problem has a slow memory, recomputation only
    with `recompute`); ScheduleError when it cannot reach the budget."""
    schedule = store_all(problem)
    outcome = simulate(problem, schedule)
    moves = (_paged, _recomputed) if recompute else (_paged,)
    while ram_budget is not None and outcome.peak > ram_budget:
        best = _best_move(problem, schedule, outcome, moves)
        if best is None:
            raise ScheduleError(
                f"the greedy schedule stops at a peak of {outcome.peak} bytes, over the RAM "
                f"budget of {ram_budget}",
                hint="use the exact scheduler (poet) or raise --ram-budget",
            )
        schedule, outcome = best
    return replace(schedule, solver="greedy")


def _best_move(
    problem: ScheduleProblem, schedule: Schedule, outcome: Outcome, moves: tuple[Move, ...]
) -> tuple[Schedule, Outcome] | None:
    """The candidate move with the most bytes saved at the peak stage per unit of cost."""
    peak_stage = outcome.stage_peaks.index(outcome.peak)
    kept = schedule.stages[peak_stage - 1].keep if peak_stage > 0 else frozenset()
    readers = {i for k in schedule.stages[peak_stage].compute for i in problem.nodes[k].inputs}
    best: tuple[float, int, Schedule, Outcome] | None = None
    for value in sorted(kept - readers):
        for move in moves:
            candidate = move(problem, schedule, value, peak_stage)
            if candidate is None:
                continue
            try:
                after = simulate(problem, candidate)
            except ScheduleInvalid:
                continue
            saved = outcome.stage_peaks[peak_stage] - after.stage_peaks[peak_stage]
            if saved <= 0 or after.peak > outcome.peak:
                continue
            score = (after.cost - outcome.cost + 1) / saved
            key = (score, value)
            if best is None or key < best[:2]:
                best = (score, value, candidate, after)
    return None if best is None else (best[2], best[3])


Move = Callable[[ScheduleProblem, Schedule, int, int], "Schedule | None"]


def _gap(problem: ScheduleProblem, schedule: Schedule, value: int, stage: int) -> tuple[int, int]:
    """(a, b): the last stage before `stage` that computes or reads `value`, and the next stage
    after it that reads it (len(stages) when none: an output)."""

    def touches(s: int) -> bool:
        compute = schedule.stages[s].compute
        return value in compute or any(value in problem.nodes[k].inputs for k in compute)

    a = stage - 1
    while not touches(a):
        a -= 1
    b = stage + 1
    while b < len(schedule.stages) and not touches(b):
        b += 1
    return a, b


def _paged(problem: ScheduleProblem, schedule: Schedule, value: int, stage: int) -> Schedule | None:
    """`value` paged out in stage a, in slow storage through the gap, paged in at stage b."""
    if not problem.paging:
        return None
    a, b = _gap(problem, schedule, value, stage)
    if b >= len(schedule.stages):
        return None
    stages = list(schedule.stages)
    stages[a] = replace(stages[a], page_out=stages[a].page_out | {value})
    for t in range(a, b):
        stages[t] = replace(stages[t], keep=stages[t].keep - {value})
    stages[b] = replace(stages[b], page_in=stages[b].page_in | {value})
    return replace(schedule, stages=tuple(stages))


def _recomputed(
    problem: ScheduleProblem, schedule: Schedule, value: int, stage: int
) -> Schedule | None:
    """`value` dropped after stage a and computed again in stage b, with the ancestors it needs
    that stage b does not hold (each must be recomputable there)."""
    a, b = _gap(problem, schedule, value, stage)
    if b >= len(schedule.stages) or not problem.may_recompute(value, b):
        return None
    stages = list(schedule.stages)
    held = set(stages[b - 1].keep - {value}) | stages[b].page_in
    again, todo = {value}, [value]
    while todo:
        for i in problem.nodes[todo.pop()].inputs:
            if i in held or i in again:
                continue
            if not problem.may_recompute(i, b):
                return None
            again.add(i)
            todo.append(i)
    for t in range(a, b):
        stages[t] = replace(stages[t], keep=stages[t].keep - {value})
    stages[b] = replace(stages[b], compute=tuple(sorted({*stages[b].compute, *again})))
    return replace(schedule, stages=tuple(stages))
