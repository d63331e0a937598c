"""The patch-stage planners (plan/patches): every registered strategy gives a valid stage within
its MAC budget, never above the estimate of the graph run whole nor below its lower bound, the
same answer twice, and none with a zero budget; receptive fields as MCUNetV2 computes them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mcugen.codegen.lower import op_traits
from mcugen.model.ir import Graph
from mcugen.model.macs import graph_macs
from mcugen.model.traits import Window
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan.patches import (
    PATCHERS,
    AxisTile,
    PatchPlan,
    PatchPlanInvalid,
    PatchProblem,
    PatchStage,
    patch_problem,
    plan_patches,
    receptive_span,
    stage_error,
)
from mcugen.plan.patches.search import MAX_ENDS_PER_START, MAX_STAGE_OPS, axis_tiles, stage_ranges
from patch_graphs import inception, residual
from support import mobilenet_stem
from testgraphs import benchmark_suite

GRAPHS = {
    "stem": lambda: mobilenet_stem(1),
    "residual": lambda: residual((40, 40, 3), stem=16),
    "inception": lambda: inception((40, 40, 4)),
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


def forced(graph: Graph, grid: tuple[int, int]) -> tuple[PatchProblem, PatchPlan]:
    """The whole graph as one stage on `grid`, and its problem (stored order)."""
    order = tuple(range(len(graph.operators)))
    problem = patch_problem(graph, order, op_traits(graph), [0] * (len(order) + 1), 1)
    ops = [problem.ops[i] for i in order]
    rows, cols = axis_tiles(ops, 0, grid[0]), axis_tiles(ops, 1, grid[1])
    assert rows is not None and cols is not None
    return problem, PatchPlan(PatchStage(order, grid, rows, cols, 0, 0, 0), "forced", 0, 0, 0, 1, 0)


def with_tile(plan: PatchPlan, k: int, tile: AxisTile) -> PatchPlan:
    assert plan.stage is not None
    rows = (*plan.stage.rows[:k], tile, *plan.stage.rows[k + 1 :])
    return replace(plan, stage=replace(plan.stage, rows=rows))


def test_validate_catches_a_producer_tile_narrower_than_its_readers() -> None:
    """The stem's output feeds the expansion (with a halo) and the residual ADD: shrink the
    stem's tile to what the ADD reads (its own span made consistent) and the expansion reads
    past it."""
    problem, plan = forced(residual((12, 12, 3), stem=8), (3, 1))
    plan.validate(problem)
    assert plan.stage is not None
    t = plan.stage.rows[1]
    ops = [problem.ops[i] for i in plan.stage.ops]
    add = len(ops) - 1
    assert (t.out_lo[0], t.out_hi[0]) != (t.lo[add], t.hi[add])  # a crop: the hull is wider
    span = receptive_span(ops[0].window, 0, 12, t.lo[add], t.hi[add])
    shrunk = AxisTile(
        (span[0], *t.lo[1:]),
        (span[1], *t.hi[1:]),
        (span[2], *t.pad_before[1:]),
        (span[3], *t.pad_after[1:]),
        (t.lo[add], *t.out_lo[1:]),
        (t.hi[add], *t.out_hi[1:]),
    )
    with pytest.raises(PatchPlanInvalid, match="producer's tile holds"):
        with_tile(plan, 1, shrunk).validate(problem)


def test_validate_catches_a_span_that_is_not_the_receptive_field() -> None:
    problem, plan = forced(inception((12, 10, 4)), (2, 2))
    plan.validate(problem)
    assert plan.stage is not None
    t = plan.stage.rows[0]
    wrong = replace(t, pad_before=(0, *t.pad_before[1:]))  # the 3x3 stem's top padding lost
    with pytest.raises(PatchPlanInvalid, match="receptive field"):
        with_tile(plan, 0, wrong).validate(problem)
    gap = replace(t, out_hi=(*t.out_hi[:-1], t.out_hi[-1] - 1))
    with pytest.raises(PatchPlanInvalid, match="partition"):
        with_tile(plan, 0, gap).validate(problem)


def test_a_stage_is_a_contiguous_range_whose_only_escaping_tensor_is_its_end() -> None:
    problem, _ = forced(residual((12, 12, 3), stem=8), (2, 2))
    assert stage_error(problem, (0, 1, 2, 3, 4)) == ""
    assert stage_error(problem, (1, 2, 3, 4)) == ""  # the stem output is a stage input
    assert "used after the stage" in stage_error(problem, (0, 1, 2, 3))  # the ADD reads 0's
    assert "contiguous" in stage_error(problem, (0, 2, 3, 4))
    assert stage_error(problem, (4,)) != ""


def test_candidates_cover_the_peak_and_stay_within_the_work_bounds() -> None:
    for name, build in sorted(GRAPHS.items()):
        problem = problem_of(build())
        unpatched = max(problem.step_live)
        peaks = [s for s, b in enumerate(problem.step_live) if b == unpatched]
        ranges = list(stage_ranges(problem, unpatched))
        assert len(ranges) <= MAX_STAGE_OPS * MAX_ENDS_PER_START, name
        for s, e in ranges:
            assert s + 1 <= peaks[0] and e + 1 >= peaks[-1] and 2 <= e - s + 1 <= MAX_STAGE_OPS
            assert stage_error(problem, problem.order[s : e + 1]) == "", (name, s, e)


def test_the_residual_block_gets_a_stage_with_its_add() -> None:
    graph = GRAPHS["residual"]()
    found = plan_patches(problem_of(graph), budget=0.3)
    assert found.stage is not None
    opcodes = {graph.operators[i].opcode for i in found.stage.ops}
    assert "ADD" in opcodes and found.estimated_arena < found.unpatched_arena
