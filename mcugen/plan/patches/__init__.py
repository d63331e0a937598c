"""Patch-stage planners: a registry of pure functions `(PatchProblem, *, budget) -> PatchPlan`.

A patch stage runs a sub-graph of spatially local operators (chains, branches, residual ADDs,
channel concatenations) tile by tile over a grid of its end
tensor, so only a tile of each early activation is ever live (MCUNetV2, Lin et al., NeurIPS
2021): the arena drops below the live-bytes bound of any operator order, for the MACs of the
recomputed halos. The planner chooses the stage and the grid from plain numbers
(problem.py); the rewrite that runs it is mcugen/model/patch_rewrite.py, and the pipeline keeps
it only when the arena the real planner lays out is smaller. Strategies (search.py):
- `grid` (default): every rows x cols grid up to 8 x 8;
- `square`: n x n grids only, as MCUNetV2 searches them.
`budget` is the MAC overhead allowed as a fraction of the model's MACs (0: no stage).
"""

from __future__ import annotations

from functools import partial
from typing import Protocol

from mcugen.plan.patches.problem import (
    AxisTile,
    CurvePoint,
    PatchPlan,
    PatchPlanInvalid,
    PatchProblem,
    PatchStage,
    SpatialOp,
    patch_problem,
    receptive_span,
    stage_error,
)
from mcugen.plan.patches.search import all_grids, plan_stage, square_grids
from mcugen.registry import Registry

__all__ = [
    "DEFAULT",
    "PATCHERS",
    "AxisTile",
    "CurvePoint",
    "PatchPlan",
    "PatchPlanInvalid",
    "PatchProblem",
    "PatchStage",
    "SpatialOp",
    "patch_problem",
    "plan_patches",
    "receptive_span",
    "stage_error",
]


class PatchStrategy(Protocol):
    def __call__(self, problem: PatchProblem, *, budget: float) -> PatchPlan: ...


PATCHERS: Registry[PatchStrategy] = Registry("patch strategy", default="grid")
PATCHERS.add("grid", partial(plan_stage, grids=all_grids, strategy="grid"))
PATCHERS.add("square", partial(plan_stage, grids=square_grids, strategy="square"))
DEFAULT = PATCHERS.default
#: The MAC overhead allowed by default (--patch-overhead): MCUNetV2 reports 10-17 % for 4x4.
DEFAULT_OVERHEAD = 0.15


def plan_patches(problem: PatchProblem, *, budget: float, strategy: str = DEFAULT) -> PatchPlan:
    """The named strategy's plan, validated."""
    plan = PATCHERS.get(strategy)(problem, budget=budget)
    plan.validate(problem)
    return plan
