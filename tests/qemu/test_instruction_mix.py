"""The instruction-mix plugin (mcugen/link/instruction_mix.py, qemu_plugin/mix.c) on the Cortex-M4
twin: the bundled model's operators, matched to the profile, hold the profile's instruction
counts (to the clock function's few instructions), its convolutions execute multiply-accumulates
and read their weights from flash, and the cycle estimate lies between one cycle per instruction
and the TRM's worst class cost. The segment matching is checked on counts it must reject."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.errors import RunError
from mcugen.firmware.compile import build
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
    gen = generate_from_file(EXAMPLE, PlanOptions(core=target.port_board.core))
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
