"""Cycles estimated from the executed instruction mix (issue 32 item 5) on the Cortex-M4 twin of
the NUCLEO-L4R5ZI and the Cortex-M7 twin of the NUCLEO-F767ZI, next to the calibrated
per-instruction estimate, the MLPerf Tiny reference runs and the fastest published results.

Each model is built for each board's twin, run once profiled under QEMU's TCG plugin
(mcugen/link/instruction_mix.py counts the mix, mcugen/link/cycle_models.py costs it and says
each model's errors), and printed:
1. per kernel on each board: instructions, multiplies, loads by memory (flash, SRAM), stores,
   taken branches, the flash lines the data cache model filled, cycles from the mix;
2. per model: the mix's cycles and ms on each board, the calibrated estimate (2.49 cycles per
   twin instruction on the L4R5ZI), and the fastest published cycles on a Cortex-M4 at 120 MHz
   (X-CUBE-AI 9.0 KWS/VWW/IC, Plumerai AD; ../shared/ANCHORS.md);
3. the check against the MLPerf Tiny reference runs that calibrate the L4R5ZI: no TFLM firmware
   can be built here, so what is compared is cycles per twin instruction: measured on the
   reference build (TFLM + CMSIS-NN: its latency x 120 MHz over its twin instructions) and
   estimated by the mix on mcugen's builds (optimised kernels, and `--kernels reference`).
None of these is a measurement of mcugen on a board; no board is attached here.
Run: python benchmarks/cycle_mix.py [--wait-states N] [--no-reference] [MODEL...]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from mcugen.boards import load_board, resolve_target
from mcugen.energy import L4R5ZI_REFERENCE
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.link.cycle_models import MODELS, BoardCycles, board_cycles, operator_cycles
from mcugen.link.host_run import random_inputs
from mcugen.link.instruction_mix import Mix, measure_mix
from mcugen.model.macs import operator_macs
from mcugen.options import PlanOptions
from mcugen.pipeline import generate_from_file

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
MODELS_RUN = {
    "mlperf_kws_dscnn_int8": "kws",
    "mlperf_vww_mbv1_int8": "vww",
    "mlperf_ic_resnet8_int8": "ic",
    "mlperf_ad_toycar_int8": "ad",
}
BOARDS = ("nucleo-l4r5zi", "nucleo-f767")
#: the fastest published Cortex-M4 results at 120 MHz (NUCLEO-L4R5ZI), cycles per inference:
#: X-CUBE-AI 9.0 KWS 43.2 ms, VWW 88.9 ms, IC 165 ms; Plumerai AD 4.05 ms (ANCHORS.md)
PUBLISHED_M4 = {"kws": 5.18e6, "vww": 10.67e6, "ic": 19.8e6, "ad": 0.49e6}
#: the fastest published Cortex-M7 results at 216 MHz (DISCO-F746NG, the F767ZI's core and
#: clock): Plumerai KWS 17.75 ms, VWW 34.08 ms; Bosch IC 61.6 ms, AD 1.43 ms (ANCHORS.md)
PUBLISHED_M7 = {"kws": 17.75e-3, "vww": 34.08e-3, "ic": 61.6e-3, "ad": 1.43e-3}


@dataclasses.dataclass
class Result:
    mixes: list[Mix]
    names: list[str]
    macs: list[int]
    cycles: list[float]
    board: BoardCycles

    @property
    def total(self) -> float:
        return sum(self.cycles)

    @property
    def instructions(self) -> int:
        return sum(m.instructions for m in self.mixes)


def measure(model: Path, board_name: str, kernels: str, ws: int | None, tmp: Path) -> Result:
    board = load_board(board_name)
    target = resolve_target(board, emulate=True)
    facts = board_cycles(board)
    if ws is not None:
        facts = dataclasses.replace(facts, flash_wait_states=ws)
    gen = generate_from_file(model, PlanOptions(core=target.port_board.core, kernels=kernels))
    work = tmp / f"{model.stem}-{board_name}-{kernels}"
    elf = build(gen, target, work).executable
    sample = random_inputs(gen.graph, 0)
    mixes, _ = measure_mix(target, elf, gen.graph, sample, work, dcache=facts.dcache)
    names, macs = [], []
    for step in range(len(mixes)):
        op = gen.graph.operators[gen.plan.order[step]]
        variant = gen.lowered[op.index].variant
        names.append(f"reference {op.opcode}" if variant == "reference" else variant)
        macs.append(operator_macs(gen.graph, op))
    return Result(mixes, names, macs, operator_cycles(mixes, facts), facts)


def kernel_rows(model: str, r: Result) -> list[str]:
    kernels: dict[str, tuple[Mix, int, float]] = {}
    for mix, name, macs, cycles in zip(r.mixes, r.names, r.macs, r.cycles, strict=True):
        if name in kernels:
            m0, macs0, c0 = kernels[name]
            kernels[name] = (m0 + mix, macs0 + macs, c0 + cycles)
        else:
            kernels[name] = (mix, macs, cycles)
    rows = []
    for name, (mix, macs, cycles) in sorted(kernels.items(), key=lambda kv: -kv[1][2]):
        c, loads = mix.counts, mix.loads_by_region()
        per_mac = f"{cycles / macs:.2f}" if macs else "-"
        rows.append(
            f"| {model} | {r.board.board} | {name} | {mix.instructions:,} | "
            f"{c['mac'] + c['mul']:,} | {loads['flash']:,} | {loads['sram']:,} | "
            f"{c['store'] + c['store2'] + c['storem']:,} | {c['taken']:,} | "
            f"{c['flash_fills']:,} | {cycles:,.0f} | {cycles / max(mix.instructions, 1):.2f} | "
            f"{per_mac} |"
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--wait-states", type=int, default=None, help="instead of the boards'")
    parser.add_argument("--no-reference", action="store_true", help="skip the reference kernels")
    args = parser.parse_args()
    models = args.models or [SHARED / f"{m}.tflite" for m in MODELS_RUN]
    for core, model in MODELS.items():
        print(f"{core}: {model.method}; class costs:")
        for name, (cycles, source) in model.costs.items():
            print(f"- {name}: {cycles:+g} ({source})")
    results: dict[tuple[str, str, str], Result] = {}
    with tempfile.TemporaryDirectory(prefix="mcugen-mix-") as tmp:
        for model in models:
            for board in BOARDS:
                kernel_sets = (
                    ("opt",) if args.no_reference or board != BOARDS[0] else ("opt", "reference")
                )
                for kernels in kernel_sets:
                    try:
                        results[model.stem, board, kernels] = measure(
                            model, board, kernels, args.wait_states, Path(tmp)
                        )
                    except McugenError as err:
                        print(f"{model.stem} on {board} ({kernels}): error: {err.line()}")
    print_kernels(results)
    print_models(results)
    print_reference_check(results)
    return 0


def print_kernels(results: dict[tuple[str, str, str], Result]) -> None:
    print(
        "\n| model | board | kernel | instructions | multiplies | flash loads | SRAM loads "
        "| stores | taken branches | flash lines filled | cycles (mix) | per instr. | cycles/MAC |"
    )
    print("|---" * 13 + "|")
    for (model, _, kernels), r in results.items():
        if kernels == "opt":
            print("\n".join(kernel_rows(model, r)))


def print_models(results: dict[tuple[str, str, str], Result]) -> None:
    print(
        "\n| model | M4 twin instr. | M4 mix cycles | M4 mix ms "
        "| M4 calibrated cycles (2.49/instr.) "
        "| published M4 cycles | mix / published | M7 twin instr. | M7 mix cycles | M7 mix ms "
        "| published M7 ms | mix / published |"
    )
    print("|---" * 12 + "|")
    for (model, board, kernels), m4 in results.items():
        if board != BOARDS[0] or kernels != "opt":
            continue
        key = MODELS_RUN.get(model, "")
        cpi = load_board(board).energy.cycles_per_instruction  # type: ignore[union-attr]
        m7 = results.get((model, BOARDS[1], "opt"))
        pub4, pub7 = PUBLISHED_M4.get(key), PUBLISHED_M7.get(key)
        m7_cells = "| - | - | - | - | - |"
        if m7 is not None:
            ms7 = m7.total / m7.board.clock_hz * 1e3
            ratio7 = f"{ms7 / (pub7 * 1e3):.2f}" if pub7 else "-"
            pub7_text = f"{pub7 * 1e3:.2f}" if pub7 else "-"
            m7_cells = (
                f"| {m7.instructions:,} | {m7.total:,.0f} | {ms7:.2f} | {pub7_text} | {ratio7} |"
            )
        print(
            f"| {model} | {m4.instructions:,} | {m4.total:,.0f} | "
            f"{m4.total / m4.board.clock_hz * 1e3:.2f} | {m4.instructions * cpi:,.0f} | "
            f"{f'{pub4:,.0f}' if pub4 else '-'} | {f'{m4.total / pub4:.2f}' if pub4 else '-'} "
            + m7_cells
        )


def print_reference_check(results: dict[tuple[str, str, str], Result]) -> None:
    print(
        "\n| model | reference run ms | its cycles | its twin instr. | measured cycles/instr. "
        "| mix cycles/instr., mcugen opt | error | mix cycles/instr., mcugen reference kernels "
        "| error |"
    )
    print("|---" * 9 + "|")
    clock = load_board(BOARDS[0]).clock_hz
    for run in L4R5ZI_REFERENCE:
        model = next((m for m, k in MODELS_RUN.items() if k == run.model), "")
        measured = run.ms * 1e-3 * clock / run.instructions
        cells = []
        for kernels in ("opt", "reference"):
            r = results.get((model, BOARDS[0], kernels))
            if r is None:
                cells.append("- | -")
                continue
            cpi = r.total / r.instructions
            cells.append(f"{cpi:.2f} | {100 * (cpi / measured - 1):+.0f} %")
        print(
            f"| {run.model.upper()} | {run.ms} | {run.ms * 1e-3 * clock:,.0f} | "
            f"{run.instructions:,} | {measured:.2f} | {cells[0]} | {cells[1]} |"
        )


if __name__ == "__main__":
    sys.exit(main())
