"""Patch stages (issue 17) on the NUCLEO-F767ZI's QEMU twin, planned as `mcugen build --board
nucleo-f767 --emulate --patch-overhead 0.15` plans: bit-exact with TFLM, in a smaller arena."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate, generate_from_file
from mcugen.plan.target import memory_target
from support import NEEDS_TWIN, SHARED_MODELS, mobilenet_stem, run_twin_against_tflm

pytestmark = NEEDS_TWIN

TWIN = resolve_target(load_board("nucleo-f767"), emulate=True)
FIRMWARE = PlanOptions(
    keep_input="auto", target=memory_target(TWIN), core=TWIN.port_board.core, patch_overhead=0
)


def run_on_twin(gen, model: bytes, seeds: list[int]) -> int:  # type: ignore[no-untyped-def]
    """Build `gen` for the twin, run `seeds`, compare with TFLM; instructions per inference."""
    with tempfile.TemporaryDirectory(prefix="mcugen-patches-") as tmp:
        result = build(gen, TWIN, Path(tmp) / "proj")
        run = run_twin_against_tflm(TWIN, result.executable, model, gen.graph, seeds)
    return run.instructions(run.ticks_per_inference[0])


def test_generated_stem_with_patches_on_the_twin() -> None:
    graph = mobilenet_stem(4)
    gen = generate(graph, options=replace(FIRMWARE, patch_overhead=0.15, patch_when="always"))
    assert gen.plan.patches is not None and gen.plan.patches.stage is not None
    assert gen.plan.arena_bytes < gen.plan.arena_without_patches
    run_on_twin(gen, write_model(graph), [1, 2])


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
def test_person_detect_with_patches_on_the_twin() -> None:
    path = SHARED_MODELS / "tflm_person_detect_int8.tflite"
    whole = generate_from_file(path, FIRMWARE)
    tiled = generate_from_file(path, replace(FIRMWARE, patch_overhead=0.15, patch_when="always"))
    assert tiled.plan.arena_bytes * 3 <= whole.plan.arena_bytes * 2  # at least 1.5x below
    base = run_on_twin(whole, path.read_bytes(), [5])
    patched = run_on_twin(tiled, path.read_bytes(), [5])
    print(
        f"person_detect: arena {whole.plan.arena_bytes} -> {tiled.plan.arena_bytes} bytes, "
        f"instructions {base} -> {patched} ({100 * (patched / base - 1):+.1f} %)"
    )


def test_two_patch_stages_on_the_twin() -> None:
    """Several stages (issue 34 item 4): a second stage searched on the tiled graph, bit-exact
    with TFLM on the twin (the input not kept: with it kept in the arena one stage is all this
    stem takes)."""
    from patch_graphs import image_stem

    graph = image_stem(1, hw=64)
    options = replace(FIRMWARE, keep_input="no", patch_overhead=0.15, patch_when="always")
    gen = generate(graph, options=options)
    assert len(gen.plan.later_patches) == 1
    assert gen.plan.arena_bytes < gen.plan.later_patches[0][1] < gen.plan.arena_without_patches
    run_on_twin(gen, write_model(graph), [1, 2])
