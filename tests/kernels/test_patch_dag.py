"""Patch stages over sub-graphs (issue 17) bit-exact with TFLM on the host build: an inverted
residual block (expand 1x1, depthwise 3x3, project 1x1, ADD with the block input), the same block
behind a convolution (its input is made in the stage, so the ADD reads a crop of the hull the
expansion needs), an Inception-like block (1x1, 1x1-3x3 and pool-1x1 branches concatenated
along channels), and MUL of two branches and by a per-channel constant, each run tile by tile
over forced (odd) grids; then the residual block planned with patches on."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcugen.codegen.lower import op_traits
from mcugen.model.ir import Graph
from mcugen.model.patch_rewrite import TILE_LOAD, TILE_STORE, tile_stage
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan.patches import PatchPlan, PatchStage, patch_problem
from mcugen.plan.patches.search import axis_tiles
from patch_graphs import inception, multiply, residual
from support import assert_matches_tflm


def tiled(grid: tuple[int, int], crops: bool = False) -> Callable[[Graph], Generated]:
    """Generate the graph with every operator in one stage run tile by tile over `grid`, after
    checking the stage is valid; `crops`: some tile reads a crop of a tile made in the stage."""

    def run(graph: Graph) -> Generated:
        order = tuple(range(len(graph.operators)))
        problem = patch_problem(graph, order, op_traits(graph), [0] * (len(order) + 1), 1)
        assert set(problem.ops) == set(order), "every operator is tileable"
        ops = [problem.ops[i] for i in order]
        rows, cols = axis_tiles(ops, 0, grid[0]), axis_tiles(ops, 1, grid[1])
        assert rows is not None and cols is not None
        stage = PatchStage(order, grid, rows, cols, 0, 0, 0)
        PatchPlan(stage, "forced", 0, 0, 0, 1.0, 0).validate(problem)
        patched = tile_stage(graph, order, rows, cols)
        loads = [op for op in patched.operators if op.custom_code == TILE_LOAD]
        from_tiles = [op for op in loads if op.inputs[0] >= len(graph.tensors)]
        assert bool(from_tiles) == crops
        assert sum(op.custom_code == TILE_STORE for op in patched.operators) == grid[0] * grid[1]
        return generate(patched, options=PlanOptions())

    return run


CASES: dict[str, tuple[Callable[[], Graph], bool, tuple[tuple[int, int], ...]]] = {
    "residual": (residual, False, ((3, 2), (4, 5), (1, 3))),
    "residual_stem": (lambda: residual(stem=5), True, ((3, 3), (5, 2))),
    "inception": (inception, True, ((3, 2), (2, 5))),
    "multiply": (multiply, False, ((3, 4), (2, 1))),
}


@pytest.mark.parametrize(
    ("name", "grid"), [(n, g) for n, (_, _, grids) in CASES.items() for g in grids], ids=str
)
def test_sub_graph_tile_by_tile_matches_tflm(name: str, grid: tuple[int, int]) -> None:
    build, crops, _ = CASES[name]
    model = write_model(build())
    assert_matches_tflm(model, samples=2, seed=9, generate_fn=tiled(grid, crops))


def test_residual_block_planned_with_patches_matches_tflm() -> None:
    """Behind a 3x3 stem that widens 3 channels to 16, the pipeline's stage holds the residual
    ADD (its other end, the 16-channel stem output, would stay whole), in less arena."""
    graph = residual((48, 48, 3), stem=16, seed=8)
    add = next(op.index for op in graph.operators if op.opcode == "ADD")

    def run(g: Graph) -> Generated:
        gen = generate(g, options=PlanOptions(patch_overhead=0.3, patch_when="always"))
        report = gen.plan.patches
        assert report is not None and report.stage is not None, "no patch stage was kept"
        assert add in report.stage.ops
        assert gen.plan.arena_bytes < gen.plan.arena_without_patches
        return gen

    assert_matches_tflm(write_model(graph), samples=2, seed=4, generate_fn=run)
