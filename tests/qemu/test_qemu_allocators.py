"""Allocator modes under QEMU: static, compacting and planned firmware bit-exact with TFLM (float32
outputs within the 1e-5 relative tolerance of tests/kernels/test_models.py; the largest difference
is printed, and is 0 on every case today), compacting/planned outputs bit-identical to static ones,
compacting/planned arena at the plan's peak live bytes (scratch included), instruction counts per
inference next to static offsets (printed; run with -s to see them).

Covered: the bundled example, every shared model mcugen builds
(tests/planners/test_allocators.py `REAL`) and all 12 generated graphs of `benchmark_suite()`
under `python benchmarks/sweeps.py` (the suite runs `CORE` and the quick graphs), on
the NUCLEO-F767ZI twin (QEMU mps2-an500 with the board's 512 KB RAM and 2 MB flash) unless a model
does not fit it:

- tflm_mobilenet_v2_int8 (arena 1,404,928 B > 512 KB RAM; 3,542,016 B of weights > 2 MB flash) runs
  on the plain mps2-an500 board (4 MB RAM, 4 MB flash), with one sample (150 KB of input over the
  emulated UART per run).
- deeplabv3_f32 runs on no emulated board: its arena, 5,639,616 B (static = compacting = planned:
  the static layout already reaches the peak live bytes), exceeds the RAM of every board in
  boards/ (at most 4,194,304 B: mps2-an500, mps2-an386; mps3-an547 has 512 KB, netduinoplus2
  128 KB). `test_deeplabv3_fits_no_emulated_board` checks these figures and fails once a board
  can hold it. Its 792 KB input and 5.5 MB output would also take minutes per sample over the UART.

The stateful models (SVDF keyword model, the LSTM models) run their two samples through one
firmware, so the state the first leaves is part of what the second is compared on. Not built by
mcugen, hence not here: the signal-op preprocessor and the hybrid KWS.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import board_names, load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.link.device_run import DeviceRun, open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate_from_file
from mcugen.plan.dynamic import COMPACTING, PLANNED, STATIC
from mcugen.plan.fit import firmware_ram
from mcugen.plan.target import memory_target
from mcugen.reference import first_difference, tflm_outputs
from support import EXAMPLE, MLPERF_INT8, NEEDS_TWIN, SHARED_MODELS, sweep
from testgraphs import benchmark_suite

pytestmark = NEEDS_TWIN

BOARD = "nucleo-f767"
SEEDS = [3, 11]
FLOAT_RTOL = 1e-5  # as tests/kernels/test_models.py; integer outputs must be identical
#: (model, board, seeds): the NUCLEO-F767ZI twin and two samples unless noted in the docstring.
SHARED = [
    *((stem, BOARD, SEEDS) for stem in MLPERF_INT8),
    ("tflm_hello_world_int8", BOARD, SEEDS),
    ("tflm_hello_world_f32", BOARD, SEEDS),
    ("tflm_micro_speech_int8", BOARD, SEEDS),
    ("tflm_magic_wand_f32", BOARD, SEEDS),
    ("st_miniresnetv2_aed_int8", BOARD, SEEDS),
    ("st_yamnet_aed_int8", BOARD, SEEDS),
    ("mlperf_ic_resnet8_f32", BOARD, SEEDS),
    ("mcunet_vww_mixed", BOARD, SEEDS),
    ("mlperf_vww_mbv1_f32", BOARD, SEEDS),
    ("tflm_mobilenet_v2_int8", "mps2-an500", [3]),
    ("tflm_keyword_scrambled_int8", BOARD, SEEDS),
    ("tflm_micro_speech_lstm_int8", BOARD, SEEDS),
    ("tflm_mnist_lstm_int8", BOARD, SEEDS),
    ("tflm_mnist_lstm_f32", BOARD, SEEDS),
    ("tflm_dtln_int8", BOARD, SEEDS),
]
#: The suite's core (benchmarks/sweeps.py runs them all): int8 convolution nets with residuals,
#: a fully connected net, float32, and both stateful kinds (SVDF, LSTM).
CORE = {
    "mlperf_kws_dscnn_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
    "mlperf_sww_int8",
    "tflm_hello_world_f32",
    "tflm_keyword_scrambled_int8",
    "tflm_micro_speech_lstm_int8",
}
DEEPLAB = "deeplabv3_f32"
QUICK = {name for name, _ in benchmark_suite(quick=True)}
GENERATED = sweep(benchmark_suite(), lambda case: case[0] in QUICK)
SHARED_CASES = sweep(SHARED, lambda case: case[0] in CORE)


def run_on_twin(
    gen: Generated, allocator: str, board: str, seeds: list[int], workdir: Path
) -> DeviceRun:
    target = resolve_target(load_board(board), emulate=True)
    result = build(gen, target, workdir / f"{Path(gen.source).stem}-{allocator}")
    samples = [random_inputs(gen.graph, s) for s in seeds]
    with open_device(target, result.executable, None) as link:
        return run_samples(link, gen.graph, samples, emulated=True)


def check_outputs(run: DeviceRun, reference: list, allocator: str) -> float:
    """Fail on a difference from TFLM; return the largest absolute one (0 when bit-exact)."""
    largest = 0.0
    for k, (ours, theirs) in enumerate(zip(run.outputs, reference, strict=True)):
        for j, (o, r) in enumerate(zip(ours, theirs, strict=True)):
            found = first_difference(o, r, FLOAT_RTOL)
            assert found is None, (
                f"{allocator}: sample {k} output {j}: {found[0]}/{o.size} differ from TFLM, "
                f"first at flat index {found[1]}: {o.ravel()[found[1]]} vs "
                f"{r.ravel()[found[1]]}"
            )
            diff = np.abs(o.astype(np.float64) - r.reshape(o.shape).astype(np.float64))
            largest = max(largest, float(diff.max(initial=0)))
    return largest


def check_allocators(
    model: Path, workdir: Path, board: str = BOARD, seeds: list[int] = SEEDS
) -> None:
    samples = [random_inputs(generate_from_file(model).graph, s) for s in seeds]
    reference = static = None
    for allocator in (STATIC, COMPACTING, PLANNED):
        gen = generate_from_file(model, PlanOptions(allocator=allocator))
        run = run_on_twin(gen, allocator, board, seeds, workdir)
        if reference is None:
            reference = tflm_outputs(model.read_bytes(), gen.graph, samples)
        diff = check_outputs(run, reference, allocator)
        moved = 0
        if static is None:
            static = run.outputs
        else:  # moving buffers must not change a single bit, float outputs included
            for k, (ours, base) in enumerate(zip(run.outputs, static, strict=True)):
                same = [o.tobytes() == b.tobytes() for o, b in zip(ours, base, strict=True)]
                assert all(same), f"{allocator}: sample {k} differs from static offsets"
            assert gen.dynamic is not None
            peak = gen.plan.lower_bound  # peak live bytes of the order, scratch buffers included
            assert gen.dynamic.arena_bytes == gen.view_model.arena_bytes == peak
            assert run.arena_bytes == peak, f"{allocator}: firmware arena {run.arena_bytes}"
            assert peak <= gen.plan.arena_bytes
            moved = gen.dynamic.moved_bytes
        print(
            f"{model.stem} {allocator} on {board}: "
            f"{run.instructions(run.ticks_per_inference[0]):,} instructions per inference, "
            f"arena {run.arena_bytes:,} B, {moved:,} bytes moved, {run.seconds:.1f} s, "
            f"largest difference from TFLM {diff:g}"
        )


def test_example_model_allocators_bit_exact(workdir: Path) -> None:
    check_allocators(EXAMPLE, workdir)


@pytest.mark.models
@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
@pytest.mark.parametrize(
    ("name", "board", "seeds"), SHARED_CASES, ids=[n for n, _, _ in SHARED_CASES]
)
def test_shared_models_allocators_bit_exact(
    name: str, board: str, seeds: list[int], workdir: Path
) -> None:
    check_allocators(SHARED_MODELS / f"{name}.tflite", workdir, board, seeds)


@pytest.mark.parametrize(("name", "make"), GENERATED, ids=[n for n, _ in GENERATED])
def test_generated_graphs_allocators_bit_exact(name: str, make, workdir: Path) -> None:
    path = workdir / f"{name}.tflite"
    path.write_bytes(write_model(make()))
    check_allocators(path, workdir)


@pytest.mark.models
@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
def test_deeplabv3_fits_no_emulated_board() -> None:
    """The one shared model mcugen builds that no emulated board can hold, even at the peak."""
    gen = generate_from_file(SHARED_MODELS / f"{DEEPLAB}.tflite", PlanOptions(allocator=PLANNED))
    assert gen.view_model.arena_bytes == gen.plan.lower_bound  # 5,639,616 B at the time of writing
    for board in map(load_board, board_names()):
        if board.is_host or not (board.emulator or board.twin):
            continue
        target = resolve_target(board, emulate=True)
        runtime = firmware_ram(gen.graph, gen.plan, PLANNED, memory_target(target))
        need = gen.view_model.arena_bytes + board.stack_bytes + runtime
        assert need > target.ram.size, (
            f"{DEEPLAB} needs {need:,} B of RAM and fits {board.name} ({target.ram.size:,} B): "
            "add it to SHARED"
        )
