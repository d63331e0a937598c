"""Paging on the disco-f746ng twin (mps2-an500: its PSRAM stands in for the SDRAM and the QSPI
flash): bit-exact with TFLM, the bytes the firmware pages are the plan's, the RAM is what the
linker placed, and MobileNetV2's 1.4 MB arena and 3.5 MB of weights run on a 320 KB, 1 MB
board. A build for the real board refuses memories its port does not set up yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import BuildError
from mcugen.firmware.compile import build
from mcugen.firmware.fits import target_fit
from mcugen.firmware.project import model_weights
from mcugen.firmware.sizes import firmware_sizes, section_sizes
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate_from_file
from mcugen.plan.fit import input_copy_bytes
from mcugen.plan.target import memory_target
from support import EXAMPLE, NEEDS_TWIN, SHARED_MODELS, run_twin_against_tflm
from testgraphs import benchmark_suite

pytestmark = NEEDS_TWIN


def disco(emulate: bool = True) -> Target:
    return resolve_target(load_board("disco-f746ng"), emulate=emulate)


def paged(path: Path, budget: int | None, *, copies_only: bool = False) -> Generated:
    """As `mcugen build PATH --board disco-f746ng --emulate [--ram-budget BUDGET]` plans."""
    target = memory_target(disco(), budget)
    options = PlanOptions(keep_input="auto", target=target, copies_only=copies_only)
    return generate_from_file(path, options)


def run_paged(gen: Generated, workdir: Path) -> int:
    """Build for the twin, check RAM and paged bytes against the plan and outputs against TFLM;
    the instructions per inference."""
    target = disco()
    result = build(gen, target, workdir / Path(gen.source).stem)
    fit = target_fit(gen.graph, gen.plan, "static", model_weights(gen), target)
    assert fit.fits and fit.ram_need == firmware_sizes(result.executable, target).ram_bytes
    paging = gen.plan.paging
    assert paging is not None
    sections = section_sizes(result.executable, target)
    # the paged buffers' slots, and the runner's input copy when the plan does not keep it
    copy = input_copy_bytes(gen.graph, gen.plan, "slow")
    assert copy == (
        0 if gen.plan.input_kept else -(-gen.graph.tensors[gen.graph.inputs[0]].nbytes // 16) * 16
    )
    assert sections.get(".mcu_slow", 0) == paging.slow_bytes + copy
    model = Path(gen.source).read_bytes()
    run = run_twin_against_tflm(target, result.executable, model, gen.graph, [0])
    assert run.moved_bytes == paging.schedule.bytes_in + paging.schedule.bytes_out
    return run.instructions(run.ticks_per_inference[0])


def test_the_example_paged_through_sdram(workdir: Path) -> None:
    gen = paged(EXAMPLE, 512)
    assert gen.plan.paging is not None and gen.plan.paging.slow.name == "sdram"
    assert gen.view_model.arena_bytes <= 512
    run_paged(gen, workdir)


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="needs ../shared/models")
def test_resnet8_at_a_third_of_its_arena(workdir: Path) -> None:
    """At 1/3 the schedule copies pages (at 1/4 it keeps them in the SDRAM instead)."""
    path = SHARED_MODELS / "mlperf_ic_resnet8_int8.tflite"
    arena = generate_from_file(path).plan.arena_bytes
    gen = paged(path, arena // 3)
    assert gen.plan.paging is not None
    assert gen.plan.paging.schedule.bytes_in + gen.plan.paging.schedule.bytes_out > 0
    run_paged(gen, workdir)


def test_copies_only(workdir: Path) -> None:
    """Kernels never in the SDRAM: every operand copied in before its operator, at 3/4 of the
    arena of randwire_ws12 (many live branches, small operators). IC ResNet-8 served here until
    its convolutions wrote their outputs from before their inputs: its whole arena (33,312 B) is
    now below what copies need at its largest step (33,888 B: paging counts a shared buffer
    whole), so no budget leaves it something to copy."""
    path = workdir / "randwire_ws12.tflite"
    path.write_bytes(write_model(dict(benchmark_suite())["randwire_ws12"]()))
    whole = generate_from_file(path).plan.arena_bytes
    gen = paged(path, whole * 3 // 4 // 16 * 16, copies_only=True)
    paging = gen.plan.paging
    assert paging is not None and paging.problem.cost.slow_access is None
    assert paging.schedule.bytes_in > 0 and paging.all_in_slow is None
    run_paged(gen, workdir)


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="needs ../shared/models")
def test_mobilenet_v2_runs_on_the_discovery_twin(workdir: Path) -> None:
    """1.4 MB of activations and 3.5 MB of weights on a board with 320 KB of SRAM and 1 MB of
    flash: paged to the SDRAM and read from the QSPI flash, without a budget."""
    path = SHARED_MODELS / "tflm_mobilenet_v2_int8.tflite"
    gen = paged(path, None)
    paging = gen.plan.paging
    assert paging is not None and gen.plan.arena_bytes > 1_000_000
    assert paging.fast_bytes < 320 * 1024
    fit = target_fit(gen.graph, gen.plan, "static", model_weights(gen), disco())
    assert fit.external_memory == "qspi" and fit.external_weights > 3_000_000
    assert run_paged(gen, workdir) > 0
    with pytest.raises(BuildError, match="port does not set up its"):
        build(gen, disco(emulate=False), workdir / "real")
