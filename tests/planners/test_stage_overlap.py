"""A patch stage's end laid over its input (plan/stage_overlap.py, aliasing step 6): the offset
is the smallest that keeps every store below the bytes later loads read, the planner uses it only
when the arena shrinks, and the plan validator rejects an offset one alignment step too small.
Bit-exactness of the overlapped runs is checked by tests/kernels/test_patch_stages.py."""

from __future__ import annotations

import pytest

import mcugen.plan.aliasing as aliasing
from mcugen.codegen.lower import op_traits
from mcugen.model.ir import Graph
from mcugen.model.patch_rewrite import TILE_LOAD
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan.buffers import ARENA_ALIGNMENT
from mcugen.plan.stage_overlap import (
    WindowOrderViolated,
    check_window_order,
    stage_overlaps,
    store_chains,
)
from patch_graphs import image_stem
from support import mobilenet_stem


@pytest.fixture(autouse=True)
def _no_output_before_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 6 alone: with step 7 the stride-2 stem runs over the image and no stage pays."""
    monkeypatch.setattr(aliasing, "_alias_overlap", lambda *args, **kwargs: None)


def patched_stem(seed: int = 1, hw: int = 64):  # type: ignore[no-untyped-def]
    graph, lowered, plan = prepare(
        image_stem(seed, hw=hw, stride=2), PlanOptions(patch_overhead=0.15, patch_when="always")
    )
    assert plan.patches is not None and plan.patches.stage is not None
    return graph, op_traits(graph, lowered), plan


def test_the_stage_input_lies_inside_the_end_buffer() -> None:
    graph, traits, plan = patched_stem()
    (overlap,) = stage_overlaps(graph, plan.order, traits)
    x = overlap.tensor
    assert x == graph.inputs[0]
    assert any(op.custom_code == TILE_LOAD and op.inputs[0] == x for op in graph.operators)
    offsets = plan.tensor_offsets()
    assert offsets[x] - offsets[overlap.first_part] == overlap.offset
    end = graph.tensors[x].nbytes + overlap.offset
    # the input and the end together take less than both apart
    assert end < graph.tensors[x].nbytes + graph.tensors[overlap.first_part].nbytes


def test_the_offset_is_tight_and_the_validator_catches_less() -> None:
    graph, traits, plan = patched_stem()
    (overlap,) = stage_overlaps(graph, plan.order, traits)
    assert overlap.offset > 0
    offsets = dict(plan.tensor_offsets())
    check_window_order(graph, plan.order, traits, offsets)
    (stores,) = store_chains(graph, plan.order, traits)
    parts = [graph.operators[i].outputs[0] for i in stores]
    for shift in (ARENA_ALIGNMENT, overlap.offset):
        moved = {**offsets, **{p: offsets[p] + shift for p in parts}}
        with pytest.raises(WindowOrderViolated):
            check_window_order(graph, plan.order, traits, moved)


def test_plan_prints_and_draws_the_patch_curve(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from mcugen.cli import main
    from mcugen.model.tflite_write import write_model

    model = tmp_path / "stem.tflite"
    model.write_bytes(write_model(mobilenet_stem(1, hw=48)))
    chart = tmp_path / "curve.svg"
    argv = ["plan", str(model), "--patch-overhead", "0.15", "--patch-chart", str(chart)]
    assert main([*argv, "--json", "--no-strategies"]) == 0
    rows = json.loads(capsys.readouterr().out)["patch_curve"]
    assert rows[0]["budget"] == 0 and rows[0]["grid"] is None and rows[0]["macs_added"] == 0
    assert any(r["arena"] < rows[0]["arena"] for r in rows)
    for r in rows:
        assert r["macs_added"] <= r["budget"] * r["total_macs"]
    assert chart.read_bytes().startswith(b"<?xml")
    bad = tmp_path / "curve.txt"
    assert main(["plan", str(model), "--patch-chart", str(bad)]) != 0
    assert "chart format" in capsys.readouterr().err and not bad.exists()


@pytest.mark.parametrize("hw", [64, 57])
def test_the_overlapped_stage_matches_tflm(hw: int) -> None:
    """The end's first rows written over the image's dead rows give TFLM's bytes (an odd size
    too, where tiles and rows do not divide evenly)."""
    from mcugen.model.tflite_write import write_model
    from mcugen.pipeline import Generated, generate
    from support import assert_matches_tflm

    def overlapped(graph: Graph) -> Generated:
        gen = generate(graph, options=PlanOptions(patch_overhead=0.15, patch_when="always"))
        traits = op_traits(gen.graph, gen.lowered)
        (overlap,) = stage_overlaps(gen.graph, gen.plan.order, traits)
        offsets = gen.plan.tensor_offsets()
        assert offsets[overlap.tensor] - offsets[overlap.first_part] == overlap.offset
        return gen

    assert_matches_tflm(
        write_model(image_stem(2, hw=hw, stride=2)), samples=2, seed=hw, generate_fn=overlapped
    )
