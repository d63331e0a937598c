"""Instructions per inference and firmware code size, next to TFLM's figures (ANCHORS.md).

Builds each model for a board's QEMU twin (default nucleo-f767 -> mps2-an500, Cortex-M7), runs one
seeded input twice through the serial protocol under `-icount shift=0`, and prints a table row per
model. "code" is .text + vectors (kernels, runtime, protocol, libc); TFLM's "code" column is .text
minus the model array, CMSIS-NN build (ANCHORS.md).
Run: python benchmarks/instructions.py [--board B] [MODEL...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from mcugen.boards import load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.host.device_run import open_device, run_samples
from mcugen.host.host_run import random_inputs
from mcugen.host.project import build
from mcugen.host.sizes import firmware_sizes
from mcugen.pipeline import generate_from_file

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEFAULT_MODELS = {
    "mlperf_kws_dscnn_int8": "KWS DS-CNN",
    "mlperf_vww_mbv1_int8": "VWW 96",
    "mlperf_ic_resnet8_int8": "IC ResNet-8",
    "mlperf_ad_toycar_int8": "AD01",
    "tflm_person_detect_int8": "person_detect",
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


def measure(model: Path, board: str, workdir: Path) -> tuple[int, int, int, int]:
    gen = generate_from_file(model)
    target = resolve_target(load_board(board), emulate=True)
    result = build(gen, target, workdir / model.stem)
    sample = random_inputs(gen.graph, 0)
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, [sample, sample], emulated=True)
    counts = [run.instructions(t) for t in run.ticks_per_inference]
    if counts[0] != counts[1]:
        print(f"warning: {model.stem}: counts differ between runs: {counts}", file=sys.stderr)
    sizes = firmware_sizes(result.executable, target)
    return counts[0], sizes.code, run.arena_bytes, run.stack_used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--board", default="nucleo-f767")
    args = parser.parse_args()
    models = args.models or [SHARED / "models" / f"{m}.tflite" for m in DEFAULT_MODELS]
    anchors = tflm_anchors(SHARED / "ANCHORS.md")
    print(f"board: {args.board} (QEMU twin), mcugen reference kernels, -O2; one seeded input")
    print(
        "| model | mcugen instr. | TFLM ref. instr. | TFLM CMSIS-NN instr. | mcugen code B "
        "| TFLM code B | mcugen arena B | TFLM arena B | mcugen stack B | TFLM stack B |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="mcugen-bench-") as tmp:
        for model in models:
            label = DEFAULT_MODELS.get(model.stem, model.stem)
            try:
                instr, code, arena, stack = measure(model, args.board, Path(tmp))
            except McugenError as err:
                print(f"| {label} | error: {err.line()} |")
                continue
            a = anchors.get(label, ["-"] * 6)
            print(
                f"| {label} | {instr:,} | {a[2]} | {a[3]} | {code:,} | {a[4]} | {arena:,} "
                f"| {a[1]} | {stack:,} | {a[5]} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
