"""The pipeline's patch stage: plan the graph whole, ask the patch planner (plan/patches) for a
stage, rewrite the graph to run it tile by tile (model/patch_rewrite.py), plan that, and keep it
only when its arena is really smaller. The planner's estimate ranks the candidates; the best
and its runners-up are planned for real (each one more order and layout search)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from mcugen.codegen.lower import Lowered, op_traits
from mcugen.model.ir import Graph
from mcugen.model.macs import graph_macs
from mcugen.model.patch_rewrite import tile_stage
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.patches import patch_problem, plan_patches

if TYPE_CHECKING:
    from mcugen.pipeline import PlanOptions

Prepared = tuple[Graph, dict[int, Lowered], MemoryPlan]


def with_patch_stage(
    graph: Graph,
    lowered: dict[int, Lowered],
    whole: MemoryPlan,
    options: PlanOptions,
    plan_fn: Callable[[Graph, dict[int, Lowered], PlanOptions], MemoryPlan],
) -> Prepared:
    """`graph` with the patch stage whose planned arena is smallest, if smaller than `whole`'s
    (`plan_fn` plans a graph with `options` as the pipeline does)."""
    from mcugen.codegen.viewmodel import lower_all

    traits = op_traits(graph, lowered)
    problem = patch_problem(graph, whole.order, traits, whole.live_bytes, graph_macs(graph))
    found = plan_patches(
        problem,
        budget=options.patch_overhead,
        strategy=options.patcher,
    )
    best: Prepared = (graph, lowered, whole)
    kept = None
    stages = (found.stage, *found.runners_up) if found.stage is not None else ()
    for stage in stages:
        tiled = tile_stage(graph, stage.ops, stage.rows, stage.cols)
        tiled_lowered = lower_all(
            tiled,
            tuple(range(len(tiled.operators))),
            kernels=options.kernels,
            core=options.core,
        )
        plan = plan_fn(tiled, tiled_lowered, options)
        if plan.arena_bytes < best[2].arena_bytes:
            best, kept = (tiled, tiled_lowered, plan), stage
    report = replace(found, stage=kept, runners_up=())
    plan = replace(best[2], patches=report, arena_without_patches=whole.arena_bytes)
    return best[0], best[1], plan
