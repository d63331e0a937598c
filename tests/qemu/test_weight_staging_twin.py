"""Weight staging (`--stage-weights auto`) on the NUCLEO-L4R5ZI's twin (Cortex-M4): the kernels
read the staged copies in the arena, bit-exact with TFLM, in the arena of the plan without
staging. VWW stages its pointwise convolutions' weights; KWS's arena has no free bytes at those
steps, so it stages nothing (and is checked to run the same)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mcugen.boards import Target, load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.pipeline import PlanOptions, generate_from_file
from mcugen.plan.target import memory_target
from support import NEEDS_TWIN, SHARED_MODELS, run_twin_against_tflm

pytestmark = NEEDS_TWIN


def twin() -> Target:
    return resolve_target(load_board("nucleo-l4r5zi"), emulate=True)


@pytest.mark.parametrize(
    ("model", "stages"),
    [("mlperf_vww_mbv1_int8", True), ("mlperf_kws_dscnn_int8", False)],
)
def test_staged_weights_run_bit_exact_in_the_same_arena(
    model: str, stages: bool, workdir: Path
) -> None:
    path = SHARED_MODELS / f"{model}.tflite"
    if not path.exists():
        pytest.skip("../shared/models not present")
    target = twin()
    off = PlanOptions(keep_input="auto", target=memory_target(target), core=target.port_board.core)
    gen = generate_from_file(path, replace(off, stage_weights="auto"))
    assert bool(gen.plan.staged) == stages
    assert gen.plan.arena_bytes == generate_from_file(path, off).plan.arena_bytes
    result = build(gen, target, workdir / model)
    run = run_twin_against_tflm(target, result.executable, path.read_bytes(), gen.graph, (0, 1))
    assert run.arena_bytes == gen.plan.arena_bytes
