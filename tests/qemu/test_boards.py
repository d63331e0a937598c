"""Firmware on emulated boards through the serial protocol, real-board builds, and memory limits."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import BuildError
from mcugen.firmware.compile import BuildResult, build
from mcugen.firmware.sizes import firmware_sizes
from mcugen.link.device_run import DeviceRun
from mcugen.model.builder import GraphBuilder
from mcugen.model.macs import graph_macs
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import Generated, generate, generate_from_file
from mcugen.plan.fit import fit_of
from mcugen.plan.target import memory_target
from support import EXAMPLE, MLPERF_INT8, NEEDS_TWIN, SHARED_MODELS, run_twin_against_tflm

pytestmark = NEEDS_TWIN

TWINS = ["nucleo-f767", "mps2-an386"]


def build_for(
    gen: Generated, board: str, emulate: bool, workdir: Path
) -> tuple[Target, BuildResult]:
    target = resolve_target(load_board(board), emulate=emulate)
    name = f"{Path(gen.source).stem}-{board}-{'qemu' if emulate else 'hw'}"
    return target, build(gen, target, workdir / name)


def run_and_compare(gen: Generated, board: str, workdir: Path, seeds: list[int]) -> DeviceRun:
    target, result = build_for(gen, board, True, workdir)
    model = Path(gen.source).read_bytes()
    return run_twin_against_tflm(target, result.executable, model, gen.graph, seeds)


@pytest.mark.parametrize(
    "board",
    ["nucleo-f767", "nucleo-l4r5zi", "mps2-an500", "mps2-an386", "mps3-an547", "netduinoplus2"],
)
def test_example_model_bit_exact_on_every_emulated_board(board: str, workdir: Path) -> None:
    gen = generate_from_file(EXAMPLE)
    run = run_and_compare(gen, board, workdir, [0, 0, 1])
    counts = [run.instructions(t) for t in run.ticks_per_inference]
    assert counts[0] == counts[1], "instruction counts must repeat exactly for the same input"
    # a real inference: more instructions than multiply-accumulates, fewer than 20 per MAC
    macs = graph_macs(gen.graph)
    assert macs < counts[0] < 20 * macs
    assert 0 < run.stack_used < run.stack_bytes


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
@pytest.mark.parametrize("board", TWINS)
@pytest.mark.parametrize("name", MLPERF_INT8)
def test_mlperf_models_bit_exact_on_twins(name: str, board: str, workdir: Path) -> None:
    gen = generate_from_file(SHARED_MODELS / f"{name}.tflite")
    run = run_and_compare(gen, board, workdir, [7, 7])
    counts = [run.instructions(t) for t in run.ticks_per_inference]
    print(f"{name} on {board}: {counts[0]:,} instructions per inference")
    assert counts[0] == counts[1], f"instruction counts differ between two runs: {counts}"


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
@pytest.mark.parametrize("name", MLPERF_INT8)
def test_real_board_elf_at_flash_origin(name: str, workdir: Path) -> None:
    gen = generate_from_file(SHARED_MODELS / f"{name}.tflite")
    target, result = build_for(gen, "nucleo-f767", False, workdir)
    headers = subprocess.run(
        ["arm-none-eabi-readelf", "-S", str(result.executable)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    vector_line = next(line for line in headers.splitlines() if ".isr_vector" in line)
    assert "08000000" in vector_line
    sizes = firmware_sizes(result.executable, target)
    assert sizes.arena == gen.plan.arena_bytes
    assert sizes.weights >= sum(len(c.data) for c in gen.view_model.constants)
    assert sizes.flash_bytes <= 2 * 1024 * 1024 and sizes.ram_bytes <= 512 * 1024
    assert (result.directory / "platformio.ini").is_file()


def big_activation_model(side: int) -> bytes:
    """A model whose arena is about 2 * side * side * 8 bytes."""
    b = GraphBuilder()
    x = b.input((1, side, side, 8), "int8", scale=0.1, zero_point=0)
    y = b.activation((1, side, side, 8), "int8", scale=0.1, zero_point=0)
    b.op("RELU", [x], [y])
    b.output(y)
    return b.tflite()


def test_arena_larger_than_ram_fails_at_build_with_the_overflow(workdir: Path) -> None:
    graph = import_model(big_activation_model(256), source="big")
    gen = generate(graph, model_name="big")
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    with pytest.raises(BuildError) as info:
        build(gen, target, workdir / "big")
    text = str(info.value)
    assert "does not fit nucleo-f767" in text and "over by" in text
    need = gen.plan.arena_bytes + target.board.stack_bytes
    assert need > 512 * 1024
    assert not (workdir / "big").exists()


def test_the_pre_check_and_the_linker_agree_on_ram(workdir: Path) -> None:
    """The fit verdict counts RAM to the byte: a model that fits by its figure links in exactly
    that RAM, and one a few kilobytes larger is refused before compiling, by the same figure."""
    target = resolve_target(load_board("nucleo-f767"), emulate=False)
    gen = generate(import_model(big_activation_model(140), source="fits"), model_name="fits")
    fit = fit_of(gen.graph, gen.plan, "static", 0, memory_target(target))
    assert fit.fits and 512 * 1024 - fit.ram_need == 44_496
    result = build(gen, target, workdir / "fits")
    assert firmware_sizes(result.executable, target).ram_bytes == fit.ram_need
    gen = generate(import_model(big_activation_model(150), source="near"), model_name="near")
    with pytest.raises(BuildError, match="over by 25104 bytes"):
        build(gen, target, workdir / "near")


def test_linker_reports_flash_overflow_in_bytes(workdir: Path) -> None:
    """Weights just below the flash: the pre-check (weights only) passes, the code does not fit,
    and the linker's overflow comes back as one line with the bytes."""
    target = resolve_target(load_board("netduinoplus2"), emulate=False)
    b = GraphBuilder()
    x = b.input((1, 1040), "int8", scale=0.1, zero_point=0)
    w = b.const(np.ones((1000, 1040), np.int8), scale=0.01, zero_point=0)
    y = b.activation((1, 1000), "int8", scale=0.5, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, -1], [y])
    b.output(y)
    gen = generate(import_model(b.tflite(), source="heavy"), model_name="heavy")
    assert fit_of(gen.graph, gen.plan, "static", 1_040_000, memory_target(target)).fits
    with pytest.raises(BuildError) as info:
        build(gen, target, workdir / "heavy")
    assert "overflowed by" in str(info.value) and "does not fit netduinoplus2" in str(info.value)
    assert not (workdir / "heavy").exists()
