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
from dataclasses import dataclass, replace

from mcugen.train.schedule.problem import ScheduleError, ScheduleProblem
from mcugen.train.schedule.program import (
    Outcome,
    Schedule,
    ScheduleInvalid,
    Stage,
    run_stage,
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


def greedy(
    problem: ScheduleProblem,
    ram_budget: int | None,
    *,
    recompute: bool = True,
    capped: bool = True,
) -> Schedule:
    """The heuristic above (paging only when the problem has a slow memory, recomputation only
    with `recompute`; with `capped`, bytes freed past the peak's excess count for nothing);
    ScheduleError when it cannot reach the budget."""
    schedule = store_all(problem)
    outcome = simulate(problem, schedule)
    moves = (_paged, _recomputed, _recomputed_holding) if recompute else (_paged,)
    while ram_budget is not None and outcome.peak > ram_budget:
        excess = outcome.peak - ram_budget if capped else outcome.peak
        best = _best_move(problem, schedule, outcome, moves, excess)
        if best is None:
            raise ScheduleError(
                f"the greedy schedule stops at a peak of {outcome.peak} bytes, over the RAM "
                f"budget of {ram_budget}",
                hint="use the exact scheduler (poet) or raise --ram-budget",
            )
        schedule, outcome = best
    return replace(schedule, solver="greedy")


def _best_move(
    problem: ScheduleProblem,
    schedule: Schedule,
    outcome: Outcome,
    moves: tuple[Move, ...],
    excess: int,
) -> tuple[Schedule, Outcome] | None:
    """The candidate move with the most bytes saved at the peak stage per unit of cost, bytes
    beyond `excess` counting for nothing (a large value is no better than a small one when the
    small one is enough)."""
    peak_stage = outcome.stage_peaks.index(outcome.peak)
    kept = schedule.stages[peak_stage - 1].keep if peak_stage > 0 else frozenset()
    readers = {i for k in schedule.stages[peak_stage].compute for i in problem.nodes[k].inputs}
    best: tuple[float, int, int, _Move] | None = None
    stored = [frozenset[int]()]  # per stage, the values paged out before it
    for stage in schedule.stages:
        stored.append(stored[-1] | stage.page_out if stage.page_out else stored[-1])
    for value in sorted(kept - readers):
        for number, move in enumerate(moves):
            found = move(problem, schedule, value, peak_stage)
            if found is None:
                continue
            changed = found.rerun(problem, schedule, outcome, stored)
            if changed is None:
                continue
            peaks, added = changed
            saved = outcome.stage_peaks[peak_stage] - peaks.get(
                peak_stage, outcome.stage_peaks[peak_stage]
            )
            if saved <= 0 or max(peaks.values()) > outcome.peak:
                continue
            key = ((added + 1) / min(saved, excess), value, number)
            if best is None or key < best[:3]:
                best = (*key, found)
    if best is None:
        return None
    after = best[3].apply(schedule)
    return after, simulate(problem, after)


@dataclass(frozen=True)
class _Move:
    """`value` leaves RAM after stage a (which becomes `first`) and is back in stage b (`last`);
    the stages between no longer keep it. `held`: (value j, stage s) pairs, j kept in RAM from
    stage s to b (for b's recomputation)."""

    value: int
    a: int
    b: int
    first: Stage
    last: Stage
    held: tuple[tuple[int, int], ...] = ()

    def stage(self, schedule: Schedule, t: int) -> Stage:
        old = self.first if t == self.a else self.last if t == self.b else schedule.stages[t]
        keep = old.keep
        if self.a < t < self.b:
            keep = keep - {self.value}
        extra = {j for j, s in self.held if s <= t < self.b}
        if extra:
            keep = keep | extra
        return old if keep == old.keep else replace(old, keep=keep)

    def apply(self, schedule: Schedule) -> Schedule:
        start = min([self.a, *(s for _, s in self.held)])
        stages = list(schedule.stages)
        for t in range(start, self.b + 1):
            stages[t] = self.stage(schedule, t)
        return replace(schedule, stages=tuple(stages))

    def rerun(
        self,
        problem: ScheduleProblem,
        schedule: Schedule,
        outcome: Outcome,
        stored: list[frozenset[int]],
    ) -> tuple[dict[int, int], int] | None:
        """The memory peaks of the stages the move changes and the cost it adds, or None when it
        breaks the semantics. Stages a, b and each s run again (program.py's run_stage); on any
        other stage the values dropped or held are untouched throughout, so its peak moves by
        their sizes; the stages before and after are unchanged, and so is what b keeps."""
        nodes = problem.nodes
        again = sorted({self.a, self.b, *(s for _, s in self.held)})
        peaks = {}
        for t in range(again[0], self.b + 1):
            if t not in again:
                delta = -nodes[self.value].size if self.a < t else 0
                delta += sum(nodes[j].size for j, s in self.held if s < t)
                peaks[t] = outcome.stage_peaks[t] + delta
                continue
            stage = self.stage(schedule, t)
            kept = self.stage(schedule, t - 1).keep if t > 0 else frozenset()
            before = set(stored[t]) | (self.first.page_out if t > self.a else frozenset())
            try:
                ram, peaks[t], used = run_stage(problem, t, stage, kept, before)
            except ScheduleInvalid:
                return None
            if not stage.keep <= ram or not stage.page_out <= used:
                return None
        added = sum(
            _stage_cost(problem, self.stage(schedule, t)) - _stage_cost(problem, schedule.stages[t])
            for t in (self.a, self.b)
        )
        return peaks, added


def _stage_cost(problem: ScheduleProblem, stage: Stage) -> int:
    """What a stage costs (program.py's sum)."""
    return (
        sum(problem.nodes[k].cost for k in stage.compute)
        + sum(problem.in_cost(i)[0] for i in stage.page_in)
        + sum(problem.out_cost(i)[0] for i in stage.page_out)
    )


Move = Callable[[ScheduleProblem, Schedule, int, int], "_Move | None"]


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


def _paged(problem: ScheduleProblem, schedule: Schedule, value: int, stage: int) -> _Move | None:
    """`value` paged out in stage a, in slow storage through the gap, paged in at stage b."""
    if not problem.paging:
        return None
    a, b = _gap(problem, schedule, value, stage)
    if b >= len(schedule.stages):
        return None
    first, last = schedule.stages[a], schedule.stages[b]
    return _Move(
        value,
        a,
        b,
        replace(first, page_out=first.page_out | {value}, keep=first.keep - {value}),
        replace(last, page_in=last.page_in | {value}),
    )


def _recomputed(
    problem: ScheduleProblem, schedule: Schedule, value: int, stage: int
) -> _Move | None:
    """`value` dropped after stage a and computed again in stage b, with the ancestors it needs
    that stage b does not hold (each must be recomputable there)."""
    return _recompute(problem, schedule, value, stage, hold=False)


def _recomputed_holding(
    problem: ScheduleProblem, schedule: Schedule, value: int, stage: int
) -> _Move | None:
    """`value` dropped after stage a and computed again in stage b from its inputs, those that
    stage b does not hold kept in RAM from the last stage that has them (a small input instead
    of a large output)."""
    return _recompute(problem, schedule, value, stage, hold=True)


def _recompute(
    problem: ScheduleProblem, schedule: Schedule, value: int, stage: int, *, hold: bool
) -> _Move | None:
    a, b = _gap(problem, schedule, value, stage)
    if b >= len(schedule.stages) or not problem.may_recompute(value, b):
        return None
    stages = schedule.stages
    held = set(stages[b - 1].keep - {value}) | stages[b].page_in
    again, todo = {value}, [value]
    kept: list[tuple[int, int]] = []
    while todo:
        for i in problem.nodes[todo.pop()].inputs:
            if i in held or i in again:
                continue
            if hold:
                since = _last_held(problem, schedule, i, b)
                if since is None:
                    return None
                kept.append((i, since))
                held.add(i)
                continue
            if not problem.may_recompute(i, b):
                return None
            again.add(i)
            todo.append(i)
    if hold and not kept:
        return None  # the same as the plain recomputation
    first, last = stages[a], stages[b]
    return _Move(
        value,
        a,
        b,
        replace(first, keep=first.keep - {value}),
        replace(last, compute=tuple(sorted({*last.compute, *again}))),
        tuple(sorted(kept)),
    )


def _last_held(problem: ScheduleProblem, schedule: Schedule, value: int, b: int) -> int | None:
    """The last stage before b whose end can keep `value` (it computes it or reads it while it is
    in RAM), or None when it is paged or not found."""
    for s in range(b - 1, value - 1, -1):
        stage = schedule.stages[s]
        if value in stage.page_in or value in stage.page_out:
            return None
        if value in stage.compute or any(value in problem.nodes[k].inputs for k in stage.compute):
            return s
    return None
