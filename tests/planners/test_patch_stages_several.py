"""Several patch stages per model (issue 34 item 4, mcugen/patching.py `with_patch_stages`):
each next stage is searched on the graph tiled so far within the MACs the earlier ones left of
the budget, and kept only when the arena drops. Bit-exact with TFLM on the host (randomized
stems with Hypothesis, and person_detect and IC when ../shared/models exists), reported the
same through `mcugen plan`'s text and --json, and stopped in auto mode once the board fits."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcugen import cli, patching
from mcugen.model.ir import Graph
from mcugen.model.macs import graph_macs
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate, prepare
from mcugen.plan import dynamic
from mcugen.plan.fit import firmware_ram
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.pools import PoolMemory
from mcugen.plan.target import MemoryTarget
from mcugen.report.patches import macs_added
from patch_graphs import image_stem
from support import SHARED_MODELS, SLOW, assert_matches_tflm, pool_target

ALWAYS = PlanOptions(patch_overhead=0.15, patch_when="always")


def one_memory(size: int) -> MemoryTarget:
    """A board with one RAM of `size` bytes, no stack and no fixed RAM."""
    return pool_target((PoolMemory("ram", size, 0.5, 0.5),))


def check_stages(plan: MemoryPlan, whole_macs: int, budget: float) -> None:
    """Every later stage lowers the arena from where the one before left it, and all stages'
    MACs stay within the budget of the model's MACs."""
    assert plan.patches is not None and plan.patches.stage is not None
    arena = plan.later_patches[0][1] if plan.later_patches else plan.arena_bytes
    assert arena < plan.arena_without_patches  # the first stage's own arena
    for found, before, after in plan.later_patches:
        assert found.stage is not None and found.stage.ops
        assert before == arena and after < before
        arena = after
    assert arena == plan.arena_bytes < plan.arena_without_patches
    assert macs_added(plan) <= budget * whole_macs


def test_a_second_stage_lowers_the_stem_further(monkeypatch: pytest.MonkeyPatch) -> None:
    stem = image_stem(1, hw=64)
    graph, _, plan = prepare(stem, ALWAYS)
    assert len(plan.later_patches) == 1, "the stem takes a stage after the first"
    check_stages(plan, graph_macs(stem), 0.15)
    assert graph_macs(graph) - graph_macs(stem) == macs_added(plan)
    monkeypatch.setattr(patching, "MAX_STAGES", 1)
    one = prepare(stem, ALWAYS)[2]
    assert not one.later_patches and one.arena_bytes == plan.later_patches[0][1]
    assert plan.arena_bytes < one.arena_bytes


def tiled(graph_options: PlanOptions) -> Callable[[Graph], Generated]:
    def run(graph: Graph) -> Generated:
        gen = generate(graph, options=graph_options)
        check_stages(gen.plan, graph_macs(graph), graph_options.patch_overhead)
        return gen

    return run


def test_the_stem_with_two_stages_matches_tflm() -> None:
    model = write_model(image_stem(1, hw=64))
    assert_matches_tflm(model, samples=2, seed=4, generate_fn=tiled(ALWAYS))


@SLOW
@given(seed=st.integers(1, 200), hw=st.sampled_from([40, 48, 56, 64]))
def test_random_stems_with_every_stage_match_tflm(seed: int, hw: int) -> None:
    """Whatever stages a randomized stem gets (one or several), its outputs equal TFLM's."""
    graph = image_stem(seed, hw=hw)
    model = write_model(graph)

    def run(g: Graph) -> Generated:
        gen = generate(g, options=ALWAYS)
        if gen.plan.patches is not None and gen.plan.patches.stage is not None:
            check_stages(gen.plan, graph_macs(g), 0.15)
        return gen

    assert_matches_tflm(model, samples=1, seed=seed, generate_fn=run)


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
@pytest.mark.parametrize(
    ("name", "arena"), [("tflm_person_detect_int8", 18208), ("mlperf_ic_resnet8_int8", 28192)]
)
def test_shared_models_take_two_stages_and_match_tflm(name: str, arena: int) -> None:
    model = (SHARED_MODELS / f"{name}.tflite").read_bytes()

    def run(g: Graph) -> Generated:
        gen = generate(g, options=ALWAYS)
        assert gen.plan.arena_bytes == arena and len(gen.plan.later_patches) == 1
        check_stages(gen.plan, graph_macs(g), 0.15)
        return gen

    assert_matches_tflm(model, samples=1, seed=2, generate_fn=run)


def test_plan_reports_every_stage_in_text_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "stem.tflite"
    path.write_bytes(write_model(image_stem(1, hw=64)))
    assert cli.main(["plan", str(path), "--patch-overhead", "0.15"]) == 0
    text = capsys.readouterr().out
    assert "  then operators " in text and "  all 2 stages: " in text
    assert cli.main(["plan", str(path), "--patch-overhead", "0.15", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["patches"]
    _, _, plan = prepare(image_stem(1, hw=64), ALWAYS)
    assert len(found["later_stages"]) == 1
    later = found["later_stages"][0]
    assert later["arena"] == plan.arena_bytes and later["arena_before"] > later["arena"]
    assert found["macs_added_all_stages"] == macs_added(plan) > found["stage"]["macs_added"]


def test_auto_stops_once_the_board_fits() -> None:
    """--patch-overhead auto looks for stages only because the model does not fit; once one
    stage makes it fit, no second stage spends more MACs. A RAM that only two stages make room
    for gets both."""
    stem = image_stem(1, hw=64)
    graph, _, both = prepare(stem, ALWAYS)
    extra = firmware_ram(graph, both, dynamic.STATIC, MemoryTarget(""))
    first = both.later_patches[0][1]  # the arena after the first stage
    one = prepare(stem, PlanOptions(target=one_memory(first + extra + 256)))[2]
    assert one.patches is not None and one.patches.stage is not None
    assert not one.later_patches and not one.pools_error
    two = prepare(stem, PlanOptions(target=one_memory(both.arena_bytes + extra)))[2]
    assert len(two.later_patches) == 1 and not two.pools_error
