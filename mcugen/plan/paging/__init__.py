"""Paging schedules: which buffers live in fast memory at each step, and the copies to and from a
slow memory between steps, at the least modelled cost (issue 11, item 3).

A pager is a pure function `plan(problem, *, budget=None) -> Schedule` chosen by name:
- `belady`: the heuristic (furthest next use, fragmentation-aware first fit), fast and valid;
- `cpsat`: the exact CP-SAT model warm-started from it (windows of steps, then the whole model
  when small enough), `budget` in CP-SAT deterministic work units;
- `auto` (default): the heuristic when it meets the lower bound, else `cpsat`.
Every schedule carries the solver-independent lower bound (bound.py), and `validate` re-checks it.
Build a problem with `paging_problem(graph, order, buffers, capacity, cost)`.
"""

from __future__ import annotations

from typing import Protocol

from mcugen.plan.paging.belady import plan_belady
from mcugen.plan.paging.bound import paging_lower_bound
from mcugen.plan.paging.exact import plan_cpsat
from mcugen.plan.paging.problem import (
    CostModel,
    PagedBuffer,
    PagingError,
    PagingProblem,
    paging_problem,
    use_steps,
)
from mcugen.plan.paging.schedule import (
    SLOW,
    Copy,
    Direction,
    Episode,
    Memory,
    Schedule,
    ScheduleInvalid,
    schedule_of,
)
from mcugen.plan.paging.validate import validate
from mcugen.registry import Registry

__all__ = [
    "DEFAULT",
    "PAGERS",
    "SLOW",
    "Copy",
    "CostModel",
    "Direction",
    "Episode",
    "Memory",
    "PagedBuffer",
    "Pager",
    "PagingError",
    "PagingProblem",
    "Schedule",
    "ScheduleInvalid",
    "get_pager",
    "paging_lower_bound",
    "paging_problem",
    "schedule_of",
    "use_steps",
    "validate",
]


class Pager(Protocol):
    def __call__(self, problem: PagingProblem, *, budget: float | None = None) -> Schedule: ...


PAGERS: Registry[Pager] = Registry("pager", default="auto")
DEFAULT = PAGERS.default
PAGERS.add("belady", plan_belady)
PAGERS.add("cpsat", plan_cpsat)


@PAGERS.register("auto")
def plan_auto(problem: PagingProblem, *, budget: float | None = None) -> Schedule:
    """The heuristic when it reaches the lower bound (proven optimal), else CP-SAT from it."""
    return plan_cpsat(problem, budget=budget)


def get_pager(name: str | None = None) -> Pager:
    """The pager registered as `name` (the one-line user error listing the names if none)."""
    return PAGERS.get(name)
