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

import bisect
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
    banned: frozenset[tuple[int, str]] = frozenset(),
) -> Schedule:
    """The heuristic above (paging only when the problem has a slow memory, recomputation only
    with `recompute`; with `capped`, bytes freed past the peak's excess count for nothing; no
    move of `banned`: (value, "page" or "recompute") pairs); ScheduleError when it cannot reach
    the budget."""
    schedule = store_all(problem)
    outcome = simulate(problem, schedule)
    moves = (_paged, _recomputed, _recomputed_holding) if recompute else (_paged,)
    while ram_budget is not None and outcome.peak > ram_budget:
        excess = outcome.peak - ram_budget if capped else outcome.peak
        best = _best_move(problem, schedule, outcome, moves, excess, banned)
        if best is None:
            raise ScheduleError(
                f"the greedy schedule stops at a peak of {outcome.peak} bytes, over the RAM "
                f"budget of {ram_budget}",
                hint="use the exact scheduler (poet) or raise --ram-budget",
            )
        schedule, outcome = best
    return replace(schedule, solver="greedy")


def ruin_and_recreate(
    problem: ScheduleProblem,
    ram_budget: int,
    start: Schedule,
    *,
    recompute: bool,
    capped: bool,
    runs: int,
    enough: Callable[[int], bool] = lambda cost: False,
) -> Schedule:
    """A better greedy schedule, when one is found: the greedy heuristic again with one more of
    the moves the best schedule makes banned (each in turn: "do not recompute value 15"), the
    cheapest kept, until none is cheaper, `runs` greedy runs are spent, or `enough(cost)` says
    the cost is close enough (to a lower bound). The greedy takes the move that is cheapest at
    the peak now; banning it lets a move that is dearer there but serves more stages come first.
    Deterministic: the same runs in the same order on every machine."""
    best, cost = start, simulate(problem, start).cost
    banned: frozenset[tuple[int, str]] = frozenset()
    while runs > 0 and not enough(cost):
        found = []
        for move in sorted(_moves(best)):
            if runs == 0:
                break
            runs -= 1
            tried = banned | {move}
            try:
                schedule = greedy(
                    problem, ram_budget, recompute=recompute, capped=capped, banned=tried
                )
            except ScheduleError:
                continue
            found.append((simulate(problem, schedule).cost, sorted(tried), schedule))
        better = min(found, key=lambda x: x[:2], default=None)
        if better is None or better[0] >= cost:
            break
        cost, banned, best = better[0], frozenset(better[1]), better[2]
    return best


def _moves(schedule: Schedule) -> set[tuple[int, str]]:
    """The (value, way) moves a schedule makes: values recomputed, values paged out."""
    moves = set()
    for stage in schedule.stages:
        moves |= {(k, "recompute") for k in stage.compute[:-1]}
        moves |= {(i, "page") for i in stage.page_out}
    return moves


def _best_move(
    problem: ScheduleProblem,
    schedule: Schedule,
    outcome: Outcome,
    moves: tuple[Move, ...],
    excess: int,
    banned: frozenset[tuple[int, str]] = frozenset(),
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
    touched = _touched(problem, schedule)
    highest = _RangeMax(outcome.stage_peaks)
    for value in sorted(kept - readers):
        at = touched[value]
        nxt = bisect.bisect_right(at, peak_stage)
        gap = (at[nxt - 1], at[nxt] if nxt < len(at) else len(schedule.stages))
        for number, move in enumerate(moves):
            if (value, "page" if move is _paged else "recompute") in banned:
                continue
            found = move(problem, schedule, value, gap)
            if found is None:
                continue
            changed = found.rerun(problem, schedule, outcome, stored, highest, peak_stage)
            if changed is None:
                continue
            at_peak, top, added = changed
            saved = outcome.stage_peaks[peak_stage] - at_peak
            if saved <= 0 or top > outcome.peak:
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
        highest: _RangeMax,
        peak_stage: int,
    ) -> tuple[int, int, int] | None:
        """(the memory of `peak_stage`, the highest memory of the stages the move changes, the
        cost it adds), or None when it breaks the semantics. Stages a, b and each s run again
        (program.py's run_stage); on any other stage the values dropped or held are untouched
        throughout, so its memory moves by their sizes, the same amount on every stage between
        two that run again; the stages before and after are unchanged, and so is what b
        keeps."""
        nodes = problem.nodes
        again = sorted({self.a, self.b, *(s for _, s in self.held)})
        at_peak = outcome.stage_peaks[peak_stage]
        top = 0
        for t, following in zip(again, [*again[1:], again[-1] + 1], strict=True):
            stage = self.stage(schedule, t)
            kept = self.stage(schedule, t - 1).keep if t > 0 else frozenset()
            before = set(stored[t]) | (self.first.page_out if t > self.a else frozenset())
            try:
                ram, peak, used = run_stage(problem, t, stage, kept, before)
            except ScheduleInvalid:
                return None
            if not stage.keep <= ram or not stage.page_out <= used:
                return None
            top = max(top, peak)
            if t == peak_stage:
                at_peak = peak
            if following > t + 1:  # the stages between t and the next one run again
                delta = -nodes[self.value].size if self.a <= t else 0
                delta += sum(nodes[j].size for j, s in self.held if s <= t)
                top = max(top, highest(t + 1, following) + delta)
                if t < peak_stage < following:
                    at_peak += delta
        added = sum(
            _stage_cost(problem, self.stage(schedule, t)) - _stage_cost(problem, schedule.stages[t])
            for t in (self.a, self.b)
        )
        return at_peak, top, added


class _RangeMax:
    """The largest of values[lo:hi] in O(1) after O(n log n) (a sparse table)."""

    def __init__(self, values: tuple[int, ...]) -> None:
        self.levels = [list(values)]
        width = 1
        while 2 * width <= len(values):
            last = self.levels[-1]
            self.levels.append([max(last[i], last[i + width]) for i in range(len(last) - width)])
            width *= 2

    def __call__(self, lo: int, hi: int) -> int:
        level = (hi - lo).bit_length() - 1
        row = self.levels[level]
        return max(row[lo], row[hi - (1 << level)])


def _stage_cost(problem: ScheduleProblem, stage: Stage) -> int:
    """What a stage costs (program.py's sum)."""
    return (
        sum(problem.nodes[k].cost for k in stage.compute)
        + sum(problem.in_cost(i)[0] for i in stage.page_in)
        + sum(problem.out_cost(i)[0] for i in stage.page_out)
    )


#: A move of one value across a gap (a, b): the stage before the peak that last touches the value
#: (computes or reads it) and the next stage that reads it (len(stages) when none: an output)
Move = Callable[[ScheduleProblem, Schedule, int, tuple[int, int]], "_Move | None"]


def _touched(problem: ScheduleProblem, schedule: Schedule) -> dict[int, list[int]]:
    """Per value, the stages that compute or read it, in order."""
    touched: dict[int, list[int]] = {}
    for t, stage in enumerate(schedule.stages):
        values = set(stage.compute)
        for k in stage.compute:
            values.update(problem.nodes[k].inputs)
        for i in values:
            touched.setdefault(i, []).append(t)
    return touched


def _paged(
    problem: ScheduleProblem, schedule: Schedule, value: int, gap: tuple[int, int]
) -> _Move | None:
    """`value` paged out in stage a, in slow storage through the gap, paged in at stage b."""
    if not problem.paging:
        return None
    a, b = gap
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
    problem: ScheduleProblem, schedule: Schedule, value: int, gap: tuple[int, int]
) -> _Move | None:
    """`value` dropped after stage a and computed again in stage b, with the ancestors it needs
    that stage b does not hold (each must be recomputable there)."""
    return _recompute(problem, schedule, value, gap, hold=False)


def _recomputed_holding(
    problem: ScheduleProblem, schedule: Schedule, value: int, gap: tuple[int, int]
) -> _Move | None:
    """`value` dropped after stage a and computed again in stage b from its inputs, those that
    stage b does not hold kept in RAM from the last stage that has them (a small input instead
    of a large output)."""
    return _recompute(problem, schedule, value, gap, hold=True)


def _recompute(
    problem: ScheduleProblem, schedule: Schedule, value: int, gap: tuple[int, int], *, hold: bool
) -> _Move | None:
    a, b = gap
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
