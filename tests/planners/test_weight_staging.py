"""Weight staging (plan/weight_staging.py): copies go only into arena bytes no buffer uses at
their operator's step, so the arena never grows; the default plans and sources are unchanged;
`plan` and `build` print the same staged bytes."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcugen.cli import main
from mcugen.pipeline import PlanOptions, generate, generate_from_file
from mcugen.plan.buffers import Buffer, align_up
from mcugen.plan.layout.greedy import greedy_by_size
from mcugen.plan.memory_plan import PlanInvalid
from mcugen.plan.weight_staging import (
    MIN_REREADS,
    FlashTiming,
    StagedWeights,
    WeightReads,
    check_staged,
    estimated_stall_cycles,
    free_gaps,
    stage_weights,
)
from support import EXAMPLE, SHARED_MODELS

VWW = SHARED_MODELS / "mlperf_vww_mbv1_int8.tflite"
M4 = PlanOptions(core="cortex-m4", kernels="opt")


def used_at(buffers: list[Buffer], offsets: dict[int, int], step: int) -> set[int]:
    """Every arena byte some buffer uses at `step` (a brute-force check of `free_gaps`)."""
    used: set[int] = set()
    for b in buffers:
        for first, last, size in b.segments():
            if first <= step <= last:
                used.update(range(offsets[b.id], offsets[b.id] + size))
    return used


@st.composite
def problems(draw: st.DrawFn) -> tuple[list[Buffer], int, list[WeightReads]]:
    steps = draw(st.integers(1, 6))
    buffers = []
    for k in range(draw(st.integers(1, 8))):
        first = draw(st.integers(0, steps))
        last = draw(st.integers(first, steps))
        buffers.append(Buffer(k, align_up(draw(st.integers(1, 200))), first, last, tensor=k))
    reads = [
        WeightReads(op, 100 + op, draw(st.integers(1, 300)), draw(st.integers(1, 6)))
        for op in range(steps)
    ]
    return buffers, steps, reads


@given(problems())
def test_copies_only_go_where_no_buffer_is_and_the_arena_stays(
    problem: tuple[list[Buffer], int, list[WeightReads]],
) -> None:
    buffers, steps, reads = problem
    offsets = greedy_by_size(tuple(buffers))
    arena = max(offsets[b.id] + b.size for b in buffers)
    staged = stage_weights(buffers, offsets, tuple(range(steps)), arena, reads)
    assert check_staged(staged, buffers, offsets, arena) == ""
    for s in staged:
        assert s.offset + s.size <= arena and s.offset % 16 == 0
        copy = set(range(s.offset, s.offset + s.size))
        assert not copy & used_at(buffers, offsets, s.step)
        assert s.reads >= MIN_REREADS
    # first fit: an operator is skipped only when no gap at its step holds its weights
    placed = {s.op for s in staged}
    for w in reads:
        if w.reads >= MIN_REREADS and w.op not in placed:
            gaps = free_gaps(buffers, offsets, w.op + 1, arena)
            assert all(align_up(a) + align_up(w.nbytes) > b for a, b in gaps)


def test_a_copy_over_a_live_buffer_or_past_the_arena_is_refused() -> None:
    buffers = [Buffer(0, 64, 0, 2, tensor=0), Buffer(1, 32, 1, 1, tensor=1)]
    offsets = {0: 0, 1: 64}
    good = StagedWeights(op=1, tensor=9, offset=96, nbytes=16, step=2, reads=5)
    assert check_staged((good,), buffers, offsets, 128) == ""
    over = replace(good, offset=48)
    assert "overlap buffer 0" in check_staged((over,), buffers, offsets, 128)
    past = replace(good, offset=112, nbytes=32)
    assert "leave the arena" in check_staged((past,), buffers, offsets, 128)
    # step 2: buffer 1 is dead, its bytes are free
    assert check_staged((replace(good, offset=64),), buffers, offsets, 128) == ""
    # the same bytes at step 1, where buffer 1 lives, are not
    assert "overlap buffer 1" in check_staged(
        (replace(good, offset=64, step=1),), buffers, offsets, 128
    )


def test_weights_read_once_or_twice_are_never_staged() -> None:
    buffers = [Buffer(0, 16, 0, 1, tensor=0)]
    reads = [WeightReads(0, 5, 64, MIN_REREADS - 1)]
    assert stage_weights(buffers, {0: 0}, (0,), 4096, reads) == ()
    reads = [WeightReads(0, 5, 64, MIN_REREADS)]
    assert [s.offset for s in stage_weights(buffers, {0: 0}, (0,), 4096, reads)] == [16]


def test_the_estimate_counts_the_copy_sweep() -> None:
    timing = FlashTiming("nucleo-l4r5zi", 5, 8, "5 wait states, 64-bit reads")
    one = StagedWeights(op=0, tensor=1, offset=0, nbytes=80, step=1, reads=4)
    # 10 accesses of 8 bytes: 4 sweeps stall 4 x 10 x 5, the copy's one 10 x 5
    assert estimated_stall_cycles((one,), timing) == 3 * 10 * 5


@pytest.mark.skipif(not VWW.exists(), reason="../shared/models not present")
def test_vww_stages_into_free_bytes_with_the_same_arena_and_buffers() -> None:
    off = generate_from_file(VWW, M4)
    auto = generate_from_file(VWW, replace(M4, stage_weights="auto"))
    assert auto.plan.staged and auto.plan.staging == "auto"
    assert auto.plan.arena_bytes == off.plan.arena_bytes
    assert replace(auto.plan, staged=(), staging="", plan_seconds=0) == replace(
        off.plan, plan_seconds=0
    )
    auto.plan.validate(auto.graph)
    # only the matrix-product convolutions, which sweep their weights per pair of pixels
    assert {auto.lowered[s.op].variant for s in auto.plan.staged} == {"conv_2d_1x1_s8"}
    model_c = auto.files["model.c"]
    for s in auto.plan.staged:
        assert f"g_op{s.op}_staged" in model_c
    bad = replace(auto.plan.staged[0], offset=auto.plan.offsets[0])
    with pytest.raises(PlanInvalid):
        replace(auto.plan, staged=(bad, *auto.plan.staged[1:])).validate(auto.graph)


def test_default_sources_have_no_staging() -> None:
    gen = generate_from_file(EXAMPLE, M4)
    assert gen.plan.staged == () and gen.plan.staging == ""
    assert "mcu_stage_weights" not in gen.files["model.c"]
    assert gen.files == generate(gen.graph, model_name=EXAMPLE.stem, options=M4).files


@pytest.mark.skipif(not VWW.exists(), reason="../shared/models not present")
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
def test_plan_and_build_print_the_same_staged_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = [str(VWW), "--board", "nucleo-l4r5zi", "--emulate", "--stage-weights", "auto"]
    assert main(["plan", *common]) == 0
    planned = [ln for ln in capsys.readouterr().out.splitlines() if "weights staged:" in ln]
    assert main(["build", *common, "-o", str(tmp_path / "out")]) == 0
    built = [ln for ln in capsys.readouterr().out.splitlines() if "weights staged:" in ln]
    assert len(planned) == 1 and [ln.strip() for ln in built] == [planned[0].strip()]
    assert main(["plan", *common, "--json"]) == 0
    staged = json.loads(capsys.readouterr().out)["staged_bytes"]
    assert staged > 0 and f"weights staged: {staged} bytes" in planned[0]
