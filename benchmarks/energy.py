"""Energy estimates under emulation: the calibration against MLPerf Tiny's reference board, then
time and energy per inference for every shared model on every board with an energy model.

1. Calibration: the NUCLEO-L4R5ZI model (boards/nucleo-l4r5zi/board.toml [energy]) applied to the
   twin instructions of the TFLM + CMSIS-NN build (mcugen/energy.py L4R5ZI_REFERENCE), next to the
   published latency and energy, with the error of each; then leave-one-out: the cycles per
   instruction fitted on three models predicts the fourth.
2. Estimates: each shared model built by mcugen for each board's QEMU twin, run once under
   `-icount shift=0`, and the board's model applied. Boards that share a twin and compiler flags
   share one run. Models mcugen does not support are listed with the reason.
Run: python benchmarks/energy.py [--boards B,B] [--calibration-only] [MODEL...]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from mcugen.boards import Board, board_names, load_board, resolve_target
from mcugen.energy import L4R5ZI_REFERENCE, fitted_cpi
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.options import PlanOptions
from mcugen.pipeline import generate_from_file

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"


def calibration() -> None:
    board = load_board("nucleo-l4r5zi")
    model = board.energy
    assert model is not None
    hz = board.clock_hz
    print(
        f"## Calibration: {board.name} at {hz / 1e6:.0f} MHz, {model.cycles_per_instruction} "
        f"cycles per twin instruction, {model.run_watts(hz) * 1e3:.2f} mW running\n"
    )
    print(
        "| model | twin instr. | published ms | estimate ms | error | published uJ | estimate uJ "
        "| error | leave-one-out CPI | its energy error |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for run in L4R5ZI_REFERENCE:
        est = model.estimate(run.instructions, hz)
        others = tuple(r for r in L4R5ZI_REFERENCE if r is not run)
        cpi = fitted_cpi(others, hz)
        loo = model.run_watts(hz) * run.instructions * cpi / hz * 1e6
        t_err, e_err, l_err = est.ms / run.ms - 1, est.uj / run.uj - 1, loo / run.uj - 1
        worst = max(worst, abs(t_err), abs(e_err))
        print(
            f"| {run.model} | {run.instructions:,} | {run.ms} | {est.ms:.1f} | {t_err:+.1%} | "
            f"{run.uj:,.0f} | {est.uj:,.0f} | {e_err:+.1%} | {cpi} | {l_err:+.1%} |"
        )
    print(f"\nlargest error: {worst:.1%} (target: within 25 %)\n")


def run_instructions(model: Path, board: Board, workdir: Path) -> int | str:
    """Twin instructions of one inference of `model` built for `board`, or why there are none."""
    target = resolve_target(board, emulate=True)
    try:
        gen = generate_from_file(model, PlanOptions(core=target.port_board.core, kernels="opt"))
        result = build(gen, target, workdir / f"{board.name}-{model.stem}")
        with open_device(target, result.executable, None) as link:
            run = run_samples(link, gen.graph, [random_inputs(gen.graph, 0)], emulated=True)
    except McugenError as err:
        return err.line()
    return run.instructions(run.ticks_per_inference[0])


def estimates(models: list[Path], boards: list[Board]) -> None:
    print("## Estimates per inference (ms / uJ), mcugen's build on each board's twin\n")
    print("| model | " + " | ".join(b.name for b in boards) + " |")
    print("|---|" + "---|" * len(boards))
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mcugen-energy-") as tmp:
        for model in models:
            cache: dict[tuple[str, tuple[str, ...]], int | str] = {}
            cells = []
            for board in boards:
                key = (resolve_target(board, emulate=True).port_board.name, board.cflags)
                if key not in cache:
                    cache[key] = run_instructions(model, board, Path(tmp))
                count, energy = cache[key], board.energy
                if isinstance(count, str):
                    cells.append("does not fit" if "does not fit" in count else "unsupported")
                    notes.append(f"{model.stem} on {board.name}: {count}")
                elif energy is None:
                    cells.append(f"{count:,} instr., no model")
                else:
                    est = energy.estimate(count, board.clock_hz)
                    cells.append(f"{est.ms:,.2f} / {est.uj:,.0f}")
            print(f"| {model.stem} | " + " | ".join(cells) + " |", flush=True)
    for note in dict.fromkeys(notes):
        print(f"- {note}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--boards", default="")
    parser.add_argument("--calibration-only", action="store_true")
    args = parser.parse_args()
    calibration()
    if args.calibration_only:
        return 0
    names = args.boards.split(",") if args.boards else board_names()
    boards = [b for b in map(load_board, names) if not b.is_host]
    for board in boards:
        if board.energy is None:
            print(f"- {board.name}: no [energy] model ({board.description})")
    models = args.models or sorted(SHARED.glob("*.tflite"))
    estimates(models, [b for b in boards if b.energy is not None or args.boards])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
