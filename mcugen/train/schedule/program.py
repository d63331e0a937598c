"""What a training schedule does, and what it costs: the semantics every solver is held to.

Stage t starts with the values kept from stage t - 1 in RAM; it pages in values from slow
storage, then computes its nodes in increasing order (the last is node t; earlier ones are
recomputations). Computing k needs every input of k in RAM and adds k's value. After k, an input
of k leaves RAM when no later node of the stage reads it and it is not kept for stage t + 1 (it is
copied out first when the stage pages it out). Values no node of the stage reads stay to its end.
At the end, the kept values cross to stage t + 1, the paged-out ones are in slow storage for good
(no later write changes them), and the rest are dropped. The memory of a stage is the largest sum
of resident values' sizes while a node runs (its output included). O(nodes x inputs) per stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcugen.train.schedule.problem import ScheduleProblem


class ScheduleInvalid(ValueError):
    """A schedule that breaks the semantics (a missing input, a value paged in that was never
    paged out, ...); the message says which stage and value."""


@dataclass(frozen=True)
class Stage:
    compute: tuple[int, ...]  # increasing, ending with the stage's own node
    page_in: frozenset[int] = frozenset()
    page_out: frozenset[int] = frozenset()
    keep: frozenset[int] = frozenset()  # in RAM for the next stage (the last stage: the outputs)


@dataclass(frozen=True)
class Schedule:
    stages: tuple[Stage, ...]
    solver: str
    lower_bound: int | None = None  # of the cost; None when the solver proves none
    optimal: bool = False
    note: str = ""


@dataclass(frozen=True)
class Outcome:
    cost: int  # in the problem's unit
    time: int  # cycles
    peak: int  # bytes: the largest stage memory
    stage_peaks: tuple[int, ...]
    recomputed: int  # node runs beyond the first
    paged_out: int  # bytes
    paged_in: int


def simulate(problem: ScheduleProblem, schedule: Schedule) -> Outcome:
    """Runs the schedule's semantics; raises ScheduleInvalid when it breaks them."""
    nodes = problem.nodes
    if len(schedule.stages) != len(nodes):
        raise ScheduleInvalid(f"{len(schedule.stages)} stages for {len(nodes)} nodes")
    kept: frozenset[int] = frozenset()
    stored: set[int] = set()
    cost = time = recomputed = out_bytes = in_bytes = 0
    peaks = []
    for t, stage in enumerate(schedule.stages):
        ram, peak, used = run_stage(problem, t, stage, kept, stored)
        for i in sorted(stage.page_in):
            c, s = problem.in_cost(i)
            cost, time, in_bytes = cost + c, time + s, in_bytes + nodes[i].size
        for i in sorted(stage.page_out):
            if i not in used:
                raise ScheduleInvalid(f"stage {t} pages out {i}, which it never holds")
            c, s = problem.out_cost(i)
            cost, time, out_bytes = cost + c, time + s, out_bytes + nodes[i].size
        for k in stage.compute:
            cost, time = cost + nodes[k].cost, time + nodes[k].time
        recomputed += len(stage.compute) - 1
        if not stage.keep <= ram:
            raise ScheduleInvalid(f"stage {t} keeps {sorted(stage.keep - ram)}, not in RAM")
        stored |= stage.page_out
        kept = stage.keep
        peaks.append(peak)
    missing = [i for i, n in enumerate(nodes) if n.output and i not in kept]
    if missing:
        raise ScheduleInvalid(f"outputs {missing} are not in RAM at the end")
    return Outcome(cost, time, max(peaks, default=0), tuple(peaks), recomputed, out_bytes, in_bytes)


def run_stage(
    problem: ScheduleProblem, t: int, stage: Stage, kept: frozenset[int], stored: set[int]
) -> tuple[set[int], int, set[int]]:
    """(values in RAM at the stage's end, its memory, the values it held: kept or computed)."""
    nodes = problem.nodes
    compute = stage.compute
    if not compute or compute[-1] != t or list(compute) != sorted(set(compute)):
        raise ScheduleInvalid(f"stage {t} computes {list(compute)}: increasing, ending with {t}")
    if stage.page_in and not problem.paging or stage.page_out and not problem.paging:
        raise ScheduleInvalid(f"stage {t} pages without a slow memory")
    if not stage.page_in <= stored - kept:
        raise ScheduleInvalid(f"stage {t} pages in {sorted(stage.page_in - (stored - kept))}")
    ram = set(kept) | stage.page_in
    for k in compute[:-1]:
        if not problem.may_recompute(k, t) or k in ram:
            raise ScheduleInvalid(f"stage {t} may not recompute {k}")
    memory = sum(nodes[i].size for i in ram)
    peak = 0
    for pos, k in enumerate(compute):
        inputs = set(nodes[k].inputs)
        if not inputs <= ram:
            raise ScheduleInvalid(f"stage {t}: node {k} needs {sorted(inputs - ram)} in RAM")
        ram.add(k)
        memory += nodes[k].size
        peak = max(peak, memory)
        later = {i for j in compute[pos + 1 :] for i in nodes[j].inputs}
        for i in sorted(inputs - later - stage.keep):
            ram.discard(i)
            memory -= nodes[i].size
    return ram, peak, set(kept) | set(compute)


def validate(
    problem: ScheduleProblem,
    schedule: Schedule,
    *,
    ram_budget: int | None = None,
    time_budget: int | None = None,
) -> Outcome:
    """The outcome of a schedule that keeps its semantics and budgets; ScheduleInvalid else."""
    outcome = simulate(problem, schedule)
    if ram_budget is not None and outcome.peak > ram_budget:
        raise ScheduleInvalid(f"peak {outcome.peak} bytes over the budget of {ram_budget}")
    if time_budget is not None and outcome.time > time_budget:
        raise ScheduleInvalid(f"{outcome.time} cycles over the budget of {time_budget}")
    if schedule.lower_bound is not None and schedule.lower_bound > outcome.cost:
        raise ScheduleInvalid(f"lower bound {schedule.lower_bound} above the cost {outcome.cost}")
    return outcome
