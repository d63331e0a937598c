"""Weight staging (`--stage-weights auto`, plan/weight_staging.py) on a QEMU twin: what it costs,
measured, and what it might save, estimated.

Builds each model twice for the board's twin (default nucleo-l4r5zi -> mps2-an386, Cortex-M4),
staging off and auto, runs one seeded input on each (`-icount shift=0`) and a profiled run, and
prints per model: the weights staged per inference and into which operators, the arena of both
builds (equal: staging only uses bytes free at its step), the instructions of both (the twin
measures the copy's cost, nothing else), whether the outputs are identical, and an ESTIMATE of
the flash stall cycles saved (flash_timing's assumptions: the twin has no wait states or caches,
so it cannot show the gain). A second table lists each staged operator.
Run: python benchmarks/weight_staging.py [--board B] [MODEL (path or shared name)...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.link.cycle_models import board_cycles
from mcugen.link.device_run import DeviceRun, open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.pipeline import Generated, PlanOptions, generate_from_file
from mcugen.plan.weight_staging import FlashTiming, estimated_stall_cycles

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEFAULT_MODELS = (
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
    "tflm_person_detect_int8",
)


@dataclass(frozen=True)
class Measured:
    gen: Generated
    instructions: int
    node_instructions: list[int]  # per step of the order
    outputs: list[np.ndarray]


def measure(model: Path, board: str, stage: str, workdir: Path) -> Measured:
    target = resolve_target(load_board(board), emulate=True)
    options = PlanOptions(
        core=target.port_board.core, stage_weights=stage, keep_input="auto", kernels="opt"
    )
    gen = generate_from_file(model, options)
    result = build(gen, target, workdir / f"{model.stem}-{stage}")
    sample = random_inputs(gen.graph, 0)
    with open_device(target, result.executable, None) as link:
        run: DeviceRun = run_samples(link, gen.graph, [sample], emulated=True)
        profiled = run_samples(link, gen.graph, [sample], emulated=True, profile=True)
    return Measured(
        gen,
        run.instructions(run.ticks_per_inference[0]),
        [profiled.instructions(t) for t in profiled.node_ticks],
        run.outputs[0],
    )


#: Bytes one flash access delivers, by core's part family (an assumption of the ESTIMATE):
#: STM32L4R5 64-bit reads (RM0432 3.3), STM32F7 256-bit lines (RM0410 3.3); the flash wait states
#: are the board's own (board.toml [cycles]).
ACCESS_BYTES = {"cortex-m4": 8, "cortex-m7": 32}
#: Caches the ESTIMATE does not count (an upper bound): the L4's ART data-cache lines hold no
#: sweep of kilobytes; the M7's 16 KB D-cache holds most re-read weights (the gain mostly hidden).
NOT_COUNTED = {"cortex-m4": "no cache hits counted", "cortex-m7": "D-cache ignored"}


def flash_timing(board_name: str) -> FlashTiming:
    """The ESTIMATE's assumptions for `board_name`: its flash wait states (board.toml [cycles])
    and the access width of its part family."""
    cycles = board_cycles(load_board(board_name))
    clock = f"{cycles.clock_hz / 1e6:.0f} MHz"
    width = ACCESS_BYTES[cycles.core]
    source = (
        f"{cycles.flash_wait_states} wait states at {clock}, {8 * width}-bit reads, "
        f"{NOT_COUNTED[cycles.core]}"
    )
    return FlashTiming(board_name, cycles.flash_wait_states, width, source)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument(
        "--board", default="nucleo-l4r5zi", choices=("nucleo-l4r5zi", "nucleo-f767")
    )
    args = parser.parse_args()
    named = args.models or list(DEFAULT_MODELS)
    # a path, or a shared model's name (mlperf_vww_mbv1_int8)
    models = [
        m if Path(m).is_file() else SHARED / "models" / f"{Path(m).stem}.tflite" for m in named
    ]
    timing = flash_timing(args.board)
    print(f"board: {args.board} (QEMU twin), optimised kernels, -O2; one seeded input")
    print(
        "| model | staged B | operators | arena off B | arena auto B | instr. off | instr. auto "
        "| copy instr. | outputs | ESTIMATE stall cycles saved |"
    )
    print("|---" * 10 + "|")
    per_op: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mcugen-stage-") as tmp:
        for model in models:
            off = measure(model, args.board, "off", Path(tmp))
            auto = measure(model, args.board, "auto", Path(tmp))
            staged = auto.gen.plan.staged
            same = all(np.array_equal(a, b) for a, b in zip(off.outputs, auto.outputs, strict=True))
            saved = estimated_stall_cycles(staged, timing)
            delta = auto.instructions - off.instructions
            print(
                f"| {model.stem} | {auto.gen.plan.staged_bytes:,} | {len(staged)} "
                f"| {off.gen.plan.arena_bytes:,} | {auto.gen.plan.arena_bytes:,} "
                f"| {off.instructions:,} | {auto.instructions:,} | {delta:+,} "
                f"| {'identical' if same else 'DIFFER'} | {saved:,} |"
            )
            for s in staged:
                copy = auto.node_instructions[s.step - 1] - off.node_instructions[s.step - 1]
                variant = auto.gen.lowered[s.op].variant
                per_op.append(
                    f"| {model.stem} | {s.op} {variant} | {s.nbytes:,} | {s.reads} | {copy:+,} "
                    f"| {estimated_stall_cycles((s,), timing):,} |"
                )
    print(
        f"\nESTIMATE assumptions ({args.board}): {timing.source}; the twin measures instructions "
        "only, so the saving is a model (plan/weight_staging.py), not a measurement"
    )
    print(
        "\n| model | operator | staged B | sweeps over the weights | copy instr. "
        "| ESTIMATE stall cycles saved |"
    )
    print("|---" * 6 + "|")
    print("\n".join(per_op))
    return 0


if __name__ == "__main__":
    sys.exit(main())
