"""`--estimate mix` of `run` and `measure`: the board's cycles estimated from the instruction mix
executed on the twin (mcugen/link/cycle_models.py), beside the calibrated per-instruction
estimate. It costs one more run of the twin, under the QEMU plugin, so it is opt-in."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mcugen.boards import Target
from mcugen.errors import McugenError
from mcugen.pipeline import Generated

if TYPE_CHECKING:  # the link modules load when a mix is asked for, not with every command
    from mcugen.link.cycle_models import BoardCycles

#: `--estimate` choices: the board's calibrated cycles per instruction, or also the mix's
ESTIMATES = ("cpi", "mix")


def check_mix(args: argparse.Namespace, target: Target) -> BoardCycles | None:
    """With --estimate mix: the board's cycle facts, after checking what the mix needs (the twin,
    a model of the board's core, the plugin built) so that a run fails before building; None
    without it."""
    if getattr(args, "estimate", "cpi") != "mix":
        return None
    if not target.emulate:
        raise McugenError(
            "--estimate mix counts the instructions executed on the board's QEMU twin",
            hint="add --emulate (a board measures its own cycles with --profile)",
        )
    from mcugen.link.cycle_models import board_cycles
    from mcugen.link.instruction_mix import plugin_path

    board = board_cycles(target.board)
    plugin_path()  # builds the plugin now: no host compiler is one line, before any firmware
    return board


def mix_report(
    gen: Generated,
    target: Target,
    elf: Path,
    sample: list[np.ndarray],
    workdir: Path,
    board: BoardCycles,
    report: dict[str, Any],
) -> None:
    """Add the mix estimate to `report` (a `device_report`): "estimate_mix", and in each
    per-operator row (when profiled) its estimated cycles and its loads by memory region."""
    from mcugen.link.cycle_models import MODELS, operator_cycles
    from mcugen.link.instruction_mix import measure_mix

    mixes, _ = measure_mix(target, elf, gen.graph, sample, workdir, dcache=board.dcache)
    if not mixes:
        return
    cycles = operator_cycles(mixes, board)
    for row, c, m in zip(report.get("per_operator", []), cycles, mixes, strict=False):
        row["mix_cycles"] = round(c)
        row["loads"] = m.loads_by_region()
    total = sum(cycles)
    seconds = total / board.clock_hz
    whole = sum(mixes[1:], mixes[0])
    energy = target.board.energy
    report["estimate_mix"] = {
        "board": board.board,
        "core": board.core,
        "clock_hz": board.clock_hz,
        "method": MODELS[board.core].method,
        "flash_wait_states": board.flash_wait_states,
        "dcache": list(board.dcache) if board.dcache else None,
        "cycles": round(total),
        "ms": round(seconds * 1e3, 3),
        # at the run power of board.toml [energy], as the per-instruction estimate prices it
        "uj": round(energy.run_watts(board.clock_hz) * seconds * 1e6, 1) if energy else None,
        "operator_instructions": whole.instructions,
        "loads": whole.loads_by_region(),
        # the per-instruction estimate's cycles (board.toml [energy], calibrated or not)
        "per_instruction_cycles": (
            round(report["per_inference"] * energy.cycles_per_instruction) if energy else None
        ),
        "model": "mcugen/link/cycle_models.py",
    }


def print_mix_estimate(r: dict[str, Any]) -> None:
    """The mix line under the ESTIMATE line: labelled an estimate, its method named."""
    e = r.get("estimate_mix")
    if e is None:
        return
    other = e["per_instruction_cycles"]
    beside = "" if other is None else f" (per-instruction estimate above: {other:,})"
    uj = "" if e["uj"] is None else f" and {e['uj']:,.1f} uJ"
    cache = ", D-cache {}x{}x{} B modelled".format(*e["dcache"]) if e["dcache"] else ""
    print(
        f"  ESTIMATE by instruction mix, not a measurement: {e['cycles']:,} cycles = "
        f"{e['ms']:,.2f} ms{uj} at {e['clock_hz'] / 1e6:.0f} MHz{beside}; method: {e['method']} "
        f"({e['flash_wait_states']} wait states{cache}; {e['model']})"
    )
    loads = e["loads"]
    print(
        f"  data loads of the operators: flash {loads['flash']:,}, SRAM {loads['sram']:,}, "
        f"external {loads['external']:,}, other {loads['other']:,}"
    )
