"""The patch-stage planners (plan/patches): every registered strategy gives a valid stage within
its MAC budget, never above the estimate of the graph run whole nor below its lower bound, the
same answer twice, and none with a zero budget; receptive fields as MCUNetV2 computes them."""

from __future__ import annotations

import pytest

from mcugen.codegen.lower import op_traits
from mcugen.model.graphs import benchmark_suite
from mcugen.model.ir import Graph
from mcugen.model.macs import graph_macs
from mcugen.model.traits import Window
from mcugen.pipeline import PlanOptions, prepare
from mcugen.plan.patches import PATCHERS, PatchProblem, patch_problem, plan_patches, receptive_span
from support import mobilenet_stem

GRAPHS = {
    "stem": lambda: mobilenet_stem(1),
    **{name: build for name, build in benchmark_suite(quick=True)},
}


def problem_of(graph: Graph) -> PatchProblem:
    g, lowered, plan = prepare(graph, PlanOptions())
    traits = op_traits(g, lowered)
    return patch_problem(g, plan.order, traits, plan.live_bytes, graph_macs(g))


@pytest.mark.parametrize("strategy", PATCHERS.names())
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_every_strategy_is_valid_bounded_and_deterministic(strategy: str, name: str) -> None:
    problem = problem_of(GRAPHS[name]())
    found = plan_patches(problem, budget=0.15, strategy=strategy)  # validates
    assert found.lower_bound <= found.estimated_arena <= found.unpatched_arena
    if found.stage is not None:
        assert found.stage.macs_added <= 0.15 * found.total_macs
        assert found.estimated_arena < found.unpatched_arena
    assert plan_patches(problem, budget=0.15, strategy=strategy) == found
    assert plan_patches(problem, budget=0.0, strategy=strategy).stage is None


def test_the_stem_gets_a_stage_and_a_larger_budget_never_hurts() -> None:
    problem = problem_of(mobilenet_stem(1))
    tight, loose = (plan_patches(problem, budget=b) for b in (0.05, 0.5))
    assert loose.stage is not None
    assert loose.estimated_arena <= tight.estimated_arena < problem.step_live[0] * 10
    front = [(p.macs_added, p.arena) for p in loose.curve]
    assert front == sorted(front) and [a for _, a in front] == sorted(
        (a for _, a in front), reverse=True
    )


def test_receptive_span_clips_at_borders_and_counts_the_padding() -> None:
    w = Window(kernel=(3, 3), stride=(2, 2), dilation=(1, 1), pad=(1, 1))
    assert receptive_span(w, 0, 16, 0, 4) == (0, 8, 1, 0)  # top tile: one padded row
    assert receptive_span(w, 0, 16, 4, 8) == (7, 16, 0, 0)
    dilated = Window(kernel=(3, 3), dilation=(2, 2), pad=(2, 2))
    assert receptive_span(dilated, 1, 10, 8, 10) == (6, 10, 0, 2)  # right tile: two padded
