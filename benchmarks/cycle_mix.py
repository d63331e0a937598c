"""Cycles estimated from the executed instruction mix (issue 32 item 5), next to the calibrated
per-instruction estimate, on the Cortex-M4 twin of the NUCLEO-L4R5ZI.

Each model is built for the board's twin, run once profiled under QEMU's TCG plugin
(mcugen/link/instruction_mix.py says how the mix is counted and costed, and the model's errors),
and printed per kernel: instructions, the mix (MAC-class, loads, stores, taken branches, flash
data loads), cycles by the Cortex-M4 TRM's table with the board's flash wait states, and that
estimate against the calibrated one (2.49 cycles per twin instruction, boards/nucleo-l4r5zi).
Neither is a measurement; no board is attached here.
Run: python benchmarks/cycle_mix.py [--wait-states 5] [MODEL...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from mcugen.boards import load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.link.host_run import random_inputs
from mcugen.link.instruction_mix import M4_CYCLES, Mix, measure_mix
from mcugen.model.macs import operator_macs
from mcugen.options import PlanOptions
from mcugen.pipeline import generate_from_file

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
MODELS = (
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
)
BOARD = "nucleo-l4r5zi"
#: RM0432 3.3.3 Table 12: 5 wait states at 120 MHz in range 1 boost mode.
WAIT_STATES = 5


def model_rows(model: Path, wait_states: int, workdir: Path) -> list[str]:
    board = load_board(BOARD)
    target = resolve_target(board, emulate=True)
    gen = generate_from_file(model, PlanOptions(core=target.port_board.core))
    elf = build(gen, target, workdir / model.stem).executable
    mixes, counts = measure_mix(target, elf, gen.graph, random_inputs(gen.graph, 0), workdir)
    cpi = board.energy.cycles_per_instruction if board.energy else 0.0
    kernels: dict[str, tuple[Mix, int, int]] = {}
    for step, mix in enumerate(mixes):
        op = gen.graph.operators[gen.plan.order[step]]
        name = gen.lowered[op.index].variant
        name = f"reference {op.opcode}" if name == "reference" else name
        total, macs, instr = kernels.get(name, (None, 0, 0))  # type: ignore[arg-type]
        kernels[name] = (
            mix if total is None else total + mix,
            macs + operator_macs(gen.graph, op),
            instr + counts[step],
        )
    rows = []
    whole = None
    for name, (mix, macs, instr) in sorted(kernels.items(), key=lambda kv: -kv[1][2]):
        whole = mix if whole is None else whole + mix
        rows.append(row(model.stem, name, mix, macs, instr, wait_states, cpi))
    if whole is not None:
        macs = sum(m for _, m, _ in kernels.values())
        rows.append(row(model.stem, "**all**", whole, macs, sum(counts), wait_states, cpi))
    return rows


def row(model: str, name: str, mix: Mix, macs: int, instr: int, ws: int, cpi: float) -> str:
    c = mix.counts
    loads = c["load"] + c["load2"] + c["loadm"]
    stores = c["store"] + c["store2"] + c["storem"]
    cycles = mix.m4_cycles(ws)
    return (
        f"| {model} | {name} | {instr:,} | {c['mac'] + c['mul']:,} | {loads:,} | {stores:,} "
        f"| {c['taken']:,} | {c['flash_loads']:,} | {cycles:,.0f} | {cycles / max(instr, 1):.2f} "
        f"| {instr * cpi:,.0f} | {f'{cycles / macs:.2f}' if macs else '-'} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--wait-states", type=int, default=WAIT_STATES)
    args = parser.parse_args()
    models = args.models or [SHARED / f"{m}.tflite" for m in MODELS]
    print(f"{BOARD} twin, optimised kernels; flash wait states {args.wait_states}; class costs:")
    for name, (cycles, source) in M4_CYCLES.items():
        print(f"- {name}: {cycles:+g} ({source})")
    print(
        "\n| model | kernel | instructions | multiplies | loads | stores | taken branches "
        "| flash data loads | cycles (mix) | per instr. | cycles (2.49/instr.) | cycles/MAC |"
    )
    print("|---" * 12 + "|")
    with tempfile.TemporaryDirectory(prefix="mcugen-mix-") as tmp:
        for model in models:
            try:
                print("\n".join(model_rows(model, args.wait_states, Path(tmp))), flush=True)
            except McugenError as err:
                print(f"| {model.stem} | error: {err.line()} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
