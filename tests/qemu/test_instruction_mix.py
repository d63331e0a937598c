"""The instruction-mix plugin (mcugen/link/instruction_mix.py, qemu_plugin/mix.c) on the Cortex-M4
twin: the bundled model's operators, matched to the profile, hold the profile's instruction
counts (to the clock function's few instructions), its convolutions execute multiply-accumulates
and read their weights from flash, and the cycle estimate lies between one cycle per instruction
and the TRM's worst class cost. The segment matching is checked on counts it must reject.
On both twins (M4 and M7, mcugen/link/cycle_models.py): the loads split by memory region add up,
the data cache model fills fewer flash lines than there are flash loads, the estimate grows with
the flash wait states, and `run --estimate mix` prints per-operator estimates that sum to its
total."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.cli import main
from mcugen.errors import RunError
from mcugen.firmware.compile import build
from mcugen.link.cycle_models import board_cycles, operator_cycles
from mcugen.link.host_run import random_inputs
from mcugen.link.instruction_mix import CLASS_NAMES, EXTRA, Mix, align, measure_mix
from mcugen.options import PlanOptions
from mcugen.pipeline import generate_from_file
from support import EXAMPLE

needs_tools = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None
    or shutil.which("arm-none-eabi-gcc") is None
    or shutil.which("cc") is None,
    reason="needs qemu-system-arm, arm-none-eabi-gcc and cc (scripts/install.sh)",
)


def mix(instructions: int, **extra: int) -> Mix:
    counts = dict.fromkeys((*CLASS_NAMES, *EXTRA), 0)
    counts["alu"] = instructions
    counts.update(extra)
    return Mix(counts)


@needs_tools
def test_the_mix_of_each_operator_matches_the_profile(tmp_path: Path) -> None:
    target = resolve_target(load_board("nucleo-l4r5zi"), emulate=True)
    gen = generate_from_file(EXAMPLE, PlanOptions(core=target.port_board.core, kernels="opt"))
    elf = build(gen, target, tmp_path / "fw").executable
    mixes, counts = measure_mix(target, elf, gen.graph, random_inputs(gen.graph, 0), tmp_path)
    assert len(mixes) == len(counts) == len(gen.graph.operators)
    for m, count in zip(mixes, counts, strict=True):
        assert abs(m.instructions - count) <= 64, (m.instructions, count)
    convs = [
        m
        for step, m in enumerate(mixes)
        if gen.graph.operators[gen.plan.order[step]].opcode == "CONV_2D"
    ]
    assert convs and all(m.counts["mac"] > 0 and m.counts["flash_loads"] > 0 for m in convs)
    whole = sum(mixes[1:], mixes[0])
    cycles = whole.m4_cycles(flash_wait_states=5)
    assert whole.instructions < cycles < 7 * whole.instructions


def test_the_segments_are_every_other_one_from_the_best_start() -> None:
    # a profiled invoke: clock, operator 0, clock, operator 1, ...; the best start wins
    segments = [mix(5), mix(100), mix(3), mix(40), mix(3), mix(7)]
    chosen = align(segments, [101, 39])
    assert [m.instructions for m in chosen] == [100, 40]
    with pytest.raises(RunError, match="segments for 4 operators"):
        align(segments[:3], [1, 2, 3, 4])


@needs_tools
@pytest.mark.parametrize("board", ["nucleo-l4r5zi", "nucleo-f767"])
def test_the_estimate_grows_with_the_flash_wait_states(board: str, tmp_path: Path) -> None:
    facts = board_cycles(load_board(board))
    target = resolve_target(load_board(board), emulate=True)
    gen = generate_from_file(EXAMPLE, PlanOptions(core=target.port_board.core, kernels="opt"))
    elf = build(gen, target, tmp_path / "fw").executable
    sample = random_inputs(gen.graph, 0)
    mixes, _ = measure_mix(target, elf, gen.graph, sample, tmp_path, dcache=facts.dcache)
    for m in mixes:
        loads = m.loads_by_region()
        assert loads["flash"] + loads["sram"] + loads["external"] + loads["other"] == (
            m.counts["flash_loads"] + m.counts["other_loads"]
        )
        assert loads["external"] == 0 and loads["other"] >= 0
        assert m.counts["flash_fills"] <= m.counts["flash_loads"]
    whole = sum(mixes[1:], mixes[0])
    assert whole.loads_by_region()["sram"] > 0 and whole.loads_by_region()["flash"] > 0
    if facts.dcache is not None:  # the weights are re-read: the cache keeps most of them
        assert 0 < whole.counts["flash_fills"] < whole.counts["flash_loads"] / 4
    else:
        assert whole.counts["flash_fills"] == 0
    cycles = [
        sum(operator_cycles(mixes, dataclasses.replace(facts, flash_wait_states=ws)))
        for ws in (0, 1, 7)
    ]
    assert cycles[0] < cycles[1] < cycles[2], cycles


@needs_tools
@pytest.mark.parametrize("board", ["nucleo-l4r5zi", "nucleo-f767"])
def test_run_estimates_each_operator_and_their_sum(
    board: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the plugin is built afresh
    args = ["run", str(EXAMPLE), "--board", board, "--emulate", "--profile", "--estimate", "mix"]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    mix, rows = report["estimate_mix"], report["per_operator"]
    assert mix["core"] == load_board(board).core and "not" not in mix["method"]
    per_operator = [row["mix_cycles"] for row in rows]
    assert all(c > 0 for c in per_operator)
    assert abs(sum(per_operator) - mix["cycles"]) <= len(rows)  # each row rounded
    assert mix["ms"] == pytest.approx(mix["cycles"] / load_board(board).clock_hz * 1e3, abs=1e-3)
    assert mix["per_instruction_cycles"] > 0 and mix["uj"] > 0
    assert sum(row["loads"]["flash"] for row in rows) == mix["loads"]["flash"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "ESTIMATE by instruction mix, not a measurement" in out
    assert f"{mix['cycles']:,} cycles" in out and "cycles (mix)" in out
