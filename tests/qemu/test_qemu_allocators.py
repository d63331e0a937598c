"""Allocator modes on the NUCLEO-F767ZI twin (QEMU mps2-an500): compacting and planned firmware
bit-exact with TFLM, arena at the plan's peak live bytes (scratch included), instruction counts per
inference next to static offsets (printed; run with -s to see them)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.host.device_run import DeviceRun, open_device, run_samples
from mcugen.host.host_run import random_inputs
from mcugen.host.project import build
from mcugen.model.graphs import benchmark_suite
from mcugen.model.tflite_write import write_model
from mcugen.pipeline import Generated, PlanOptions, generate_from_file
from mcugen.plan.dynamic import COMPACTING, PLANNED, STATIC
from mcugen.reference import tflm_outputs
from support import SHARED_MODELS

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (scripts/install.sh)",
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny_cnn_int8.tflite"
SHARED = [
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
    "mlperf_sww_int8",
    "tflm_person_detect_int8",
]
GENERATED = benchmark_suite(quick=True)
SEEDS = [3, 11]


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mcugen-qemu-alloc-") as tmp:
        yield Path(tmp)


def run_on_twin(gen: Generated, allocator: str, workdir: Path) -> DeviceRun:
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    result = build(gen, target, workdir / f"{Path(gen.source).stem}-{allocator}")
    samples = [random_inputs(gen.graph, s) for s in SEEDS]
    with open_device(target, result.executable, None) as link:
        return run_samples(link, gen.graph, samples, emulated=True)


def check_allocators(model: Path, workdir: Path) -> None:
    samples = [random_inputs(generate_from_file(model).graph, s) for s in SEEDS]
    counts: dict[str, int] = {}
    reference = None
    for allocator in (STATIC, COMPACTING, PLANNED):
        gen = generate_from_file(model, PlanOptions(allocator=allocator))
        run = run_on_twin(gen, allocator, workdir)
        if reference is None:
            reference = tflm_outputs(model.read_bytes(), gen.graph, samples)
        for k, (ours, theirs) in enumerate(zip(run.outputs, reference, strict=True)):
            for j, (o, r) in enumerate(zip(ours, theirs, strict=True)):
                assert np.array_equal(o, r.reshape(o.shape)), f"{allocator}: sample {k} output {j}"
        counts[allocator] = run.instructions(run.ticks_per_inference[0])
        if allocator != STATIC:
            assert gen.dynamic is not None
            peak = gen.plan.lower_bound  # peak live bytes of the order, scratch buffers included
            assert gen.dynamic.arena_bytes == gen.view_model.arena_bytes == peak
            assert run.arena_bytes == peak, f"{allocator}: firmware arena {run.arena_bytes}"
            assert peak <= gen.plan.arena_bytes
            moved = gen.dynamic.moved_bytes
        else:
            moved = 0
        print(
            f"{model.stem} {allocator}: {counts[allocator]:,} instructions per inference, "
            f"arena {run.arena_bytes:,} B, {moved:,} bytes moved"
        )


def test_example_model_allocators_bit_exact(workdir: Path) -> None:
    check_allocators(EXAMPLE, workdir)


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
@pytest.mark.parametrize("name", SHARED)
def test_mlperf_models_allocators_bit_exact(name: str, workdir: Path) -> None:
    check_allocators(SHARED_MODELS / f"{name}.tflite", workdir)


@pytest.mark.parametrize(("name", "make"), GENERATED, ids=[n for n, _ in GENERATED])
def test_generated_graphs_allocators_bit_exact(name: str, make, workdir: Path) -> None:
    path = workdir / f"{name}.tflite"
    path.write_bytes(write_model(make()))
    check_allocators(path, workdir)
