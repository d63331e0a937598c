"""Instructions per inference and firmware code size, next to TFLM's figures (ANCHORS.md).

Builds each model for a board's QEMU twin (default nucleo-f767 -> mps2-an500, Cortex-M7), runs one
seeded input twice through the serial protocol under `-icount shift=0`, and prints a table row per
model, with instructions per multiply-accumulate (mcugen/model/macs.py; TFLM's per-MAC figures
divide its counts by the same MACs). "code" is .text + vectors (kernels, runtime, protocol, libc);
TFLM's "code" column is .text minus the model array, CMSIS-NN build (ANCHORS.md).
`--kernels reference` measures the reference kernels only (default: the optimised variants).
A second table splits each model's instructions by the kernel each operator got (a profiled run:
the firmware reads its instruction counter around every operator), with instructions per MAC;
on the Cortex-M4 twin (nucleo-l4r5zi) the first table also gives the fastest published MLPerf
Tiny result on that board in cycles (ANCHORS.md: X-CUBE-AI 9.0 for KWS, VWW, IC; Plumerai for AD),
the bar of issue 32: fewer twin instructions than those cycles.
A third table (optimised kernels) sets each model's flash data and arena beside the reference
kernels' build: what re-laid weights, requantisation streams and kernel scratch cost, and the
weights `--stage-weights auto` copies into free arena bytes per inference (plan/weight_staging.py;
0 with the default `off`; benchmarks/weight_staging.py prints its cost and estimated gain).
Run: python benchmarks/instructions.py [--board B] [--kernels opt|reference]
[--stage-weights off|auto] [MODEL...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from mcugen.boards import Target, load_board, resolve_target
from mcugen.codegen.lower._variants import KERNEL_CHOICES
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.firmware.sizes import firmware_sizes
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.model.macs import graph_macs, operator_macs
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate_from_file
from mcugen.plan.weight_staging import STAGE_CHOICES

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEFAULT_MODELS = {
    "mlperf_kws_dscnn_int8": "KWS DS-CNN",
    "mlperf_vww_mbv1_int8": "VWW 96",
    "mlperf_ic_resnet8_int8": "IC ResNet-8",
    "mlperf_ad_toycar_int8": "AD01",
    "tflm_person_detect_int8": "person_detect",
}
#: The fastest published MLPerf Tiny results on the NUCLEO-L4R5ZI (120 MHz) in cycles (ANCHORS.md).
FASTEST_M4_CYCLES = {
    "mlperf_kws_dscnn_int8": ("X-CUBE-AI", 5_180_000),
    "mlperf_vww_mbv1_int8": ("X-CUBE-AI", 10_670_000),
    "mlperf_ic_resnet8_int8": ("X-CUBE-AI", 19_800_000),
    "mlperf_ad_toycar_int8": ("Plumerai", 490_000),
}


def tflm_anchors(path: Path) -> dict[str, list[str]]:
    """Rows of ANCHORS.md's "TFLM on Cortex-M7" table, keyed by the model label."""
    if not path.is_file():
        return {}
    rows: dict[str, list[str]] = {}
    in_table = False
    for line in path.read_text().splitlines():
        if line.startswith("## TFLM on Cortex-M7"):
            in_table = True
        elif line.startswith("## "):
            in_table = False
        elif in_table and line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


#: Per kernel of a model: (operators, MACs, instructions).
Kernels = dict[str, tuple[int, int, int]]


def measure(
    model: Path, board: str, kernels: str, workdir: Path, stage: str = "off"
) -> tuple[int, int, int, int, int, Kernels]:
    target = resolve_target(load_board(board), emulate=True)
    options = PlanOptions(kernels=kernels, core=target.port_board.core, stage_weights=stage)
    gen = generate_from_file(model, options)
    result = build(gen, target, workdir / model.stem)
    FLASH_AND_SCRATCH[model.stem] = [data_sizes(gen, result.executable, target)]
    sample = random_inputs(gen.graph, 0)
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, [sample, sample], emulated=True)
        profiled = run_samples(link, gen.graph, [sample], emulated=True, profile=True)
    counts = [run.instructions(t) for t in run.ticks_per_inference]
    if counts[0] != counts[1]:
        print(f"warning: {model.stem}: counts differ between runs: {counts}", file=sys.stderr)
    by_kernel: Kernels = {}
    for step, ticks in enumerate(profiled.node_ticks):
        op = gen.graph.operators[gen.plan.order[step]]
        name = gen.lowered[op.index].variant
        if name == "reference":
            name = f"reference {op.opcode}"
        n, macs, instr = by_kernel.get(name, (0, 0, 0))
        by_kernel[name] = (
            n + 1,
            macs + operator_macs(gen.graph, op),
            instr + run.instructions(ticks),
        )
    sizes = firmware_sizes(result.executable, target)
    return counts[0], graph_macs(gen.graph), sizes.code, run.arena_bytes, run.stack_used, by_kernel


#: Per model: (weights, tables, arena, largest kernel scratch, staged weights) of the measured
#: build, then of the reference kernels' build of the same plan options (no run).
FLASH_AND_SCRATCH: dict[str, list[tuple[int, int, int, int, int]]] = {}


def data_sizes(gen: Generated, executable: Path, target: Target) -> tuple[int, int, int, int, int]:
    sizes = firmware_sizes(executable, target)
    scratch = max((low.scratch_bytes for low in gen.lowered.values()), default=0)
    arena = gen.view_model.arena_bytes
    return sizes.weights, sizes.other_rodata, arena, scratch, gen.plan.staged_bytes


def reference_sizes(model: Path, board: str, workdir: Path) -> tuple[int, int, int, int, int]:
    """`data_sizes` of the reference kernels' build (TFLM's kernels, no re-laid weights)."""
    target = resolve_target(load_board(board), emulate=True)
    options = PlanOptions(kernels="reference", core=target.port_board.core)
    gen = generate_from_file(model, options)
    result = build(gen, target, workdir / f"{model.stem}-reference")
    return data_sizes(gen, result.executable, target)


def flash_rows(label: str, opt: tuple[int, ...], ref: tuple[int, ...]) -> str:
    """The third table's row: what the optimised kernels add to flash (re-laid weights and
    requantisation streams) and to the arena (their scratch) over the reference kernels', and
    the weights it stages into free arena bytes per inference."""
    (w, t, a, s, staged), (rw, rt, ra, rs, _) = opt, ref
    return (
        f"| {label} | {w:,} | {t:,} | {rw:,} | {rt:,} | {w + t - rw - rt:+,} | {a:,} | {ra:,} "
        f"| {a - ra:+,} | {s:,} | {rs:,} | {staged:,} |"
    )


def kernel_rows(label: str, total: int, by_kernel: Kernels) -> list[str]:
    """The second table's rows of one model, the most expensive kernel first."""
    rows = []
    for name, (ops, macs, instr) in sorted(by_kernel.items(), key=lambda kv: -kv[1][2]):
        rows.append(
            f"| {label} | {name} | {ops} | {macs:,} | {instr:,} | {per_mac(instr, macs)} "
            f"| {100 * instr / total:.1f} % |"
        )
    return rows


def per_mac(count: str | int, macs: int) -> str:
    """`count` (an int, or ANCHORS.md's "1,234" text) per MAC, "-" when unknown."""
    value = int(count.replace(",", "")) if isinstance(count, str) and count[:1].isdigit() else count
    return f"{value / macs:.2f}" if isinstance(value, int) and macs else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--board", default="nucleo-f767")
    parser.add_argument("--kernels", default="opt", choices=KERNEL_CHOICES)
    parser.add_argument("--stage-weights", default="off", choices=STAGE_CHOICES)
    args = parser.parse_args()
    models = args.models or [SHARED / "models" / f"{m}.tflite" for m in DEFAULT_MODELS]
    anchors = tflm_anchors(SHARED / "ANCHORS.md")
    print(f"board: {args.board} (QEMU twin), mcugen {args.kernels} kernels, -O2; one seeded input")
    print(
        "| model | MACs | mcugen instr. | per MAC | TFLM ref. instr. | TFLM CMSIS-NN instr. "
        "| per MAC | mcugen code B | TFLM code B | mcugen arena B | TFLM arena B "
        "| mcugen stack B | TFLM stack B |"
    )
    print("|---" * 13 + "|")
    kernels: list[str] = []
    bars: list[str] = []
    flash: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mcugen-bench-") as tmp:
        for model in models:
            label = DEFAULT_MODELS.get(model.stem, model.stem)
            try:
                instr, macs, code, arena, stack, by_kernel = measure(
                    model, args.board, args.kernels, Path(tmp), args.stage_weights
                )
            except McugenError as err:
                print(f"| {label} | error: {err.line()} |")
                continue
            a = anchors.get(label, ["-"] * 6)
            print(
                f"| {label} | {macs:,} | {instr:,} | {per_mac(instr, macs)} | {a[2]} | {a[3]} "
                f"| {per_mac(a[3], macs)} | {code:,} | {a[4]} | {arena:,} | {a[1]} | {stack:,} "
                f"| {a[5]} |"
            )
            kernels += kernel_rows(label, instr, by_kernel)
            if args.kernels == "opt":
                ref = reference_sizes(model, args.board, Path(tmp))
                flash.append(flash_rows(label, FLASH_AND_SCRATCH[model.stem][0], ref))
            if args.board == "nucleo-l4r5zi" and model.stem in FASTEST_M4_CYCLES:
                engine, cycles = FASTEST_M4_CYCLES[model.stem]
                verdict = "below" if instr < cycles else f"{instr / cycles:.2f}x above"
                bars.append(f"| {label} | {instr:,} | {engine} {cycles:,} | {verdict} |")
    if bars:
        print("\n| model | mcugen instructions | fastest published, cycles | mcugen |")
        print("|---" * 4 + "|")
        print("\n".join(bars))
    print("\n| model | kernel | operators | MACs | instructions | per MAC | share |")
    print("|---" * 7 + "|")
    print("\n".join(kernels))
    if flash:
        print(
            "\nflash data and arena, optimised kernels against the reference kernels' build "
            "(same plan options): weights as the linker placed them (re-laid where a kernel "
            "wants them), tables (parameters, requantisation streams, offsets), and the largest "
            "kernel scratch buffer; staged B: weights copied into free arena bytes per "
            f"inference (--stage-weights {args.stage_weights})"
        )
        print(
            "| model | weights B | tables B | ref. weights B | ref. tables B | flash data + "
            "| arena B | ref. arena B | arena + | largest scratch B | ref. largest scratch B "
            "| staged B |"
        )
        print("|---" * 12 + "|")
        print("\n".join(flash))
    return 0


if __name__ == "__main__":
    sys.exit(main())
