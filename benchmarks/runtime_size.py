"""Runtime size per component on Cortex-M: what the linker kept of the interpreter, the dynamic
allocator and the kernels, for static offsets and for the dynamic allocators.

Builds each model's firmware for a board (default nucleo-f767, Cortex-M7, -O2, --gc-sections) and
reads the linker map (model.map), which lists every input section the link kept with its object
file, so a component's figure is exactly what it adds to the firmware (unused functions dropped).
"runtime" is interpreter + allocator + kernels; "firmware code" is the ELF's .text + vectors, as
`mcugen build` reports it (runtime, protocol, startup, port, libc).
Run: python benchmarks/runtime_size.py [--board B] [--allocator A ...] [MODEL...]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from mcugen.boards import load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.firmware.sizes import firmware_sizes
from mcugen.options import PlanOptions
from mcugen.pipeline import generate_from_file
from mcugen.plan.dynamic import ALLOCATORS, Allocator

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEFAULT_MODELS = [
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
    "tflm_person_detect_int8",
]
COMPONENTS = ("interpreter", "allocator", "kernels")
KINDS = (".text", ".rodata", ".data", ".bss")
_OUTPUT = re.compile(r"^(\.[\w.]+)\s")
_INPUT_HEAD = re.compile(r"^ (\.[\w.]+|COMMON)(\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+))?\s*$")
_INPUT_TAIL = re.compile(r"^\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)\s*$")


def component(obj: str) -> str | None:
    """The runtime component an object file of the project belongs to, None for the rest."""
    if obj == "runtime/src/interpreter.o":
        return "interpreter"
    if obj == "runtime/src/allocator.o":
        return "allocator"
    if obj.startswith("runtime/kernels/"):
        return "kernels"
    return None


def kind(output_section: str) -> str | None:
    for k in KINDS:
        if output_section == k or output_section.startswith(k + "."):
            return k
    return None


def linked_sizes(map_text: str) -> dict[tuple[str, str], int]:
    """Bytes kept by the link per (component, section kind), from a GNU ld map file."""
    sizes: dict[tuple[str, str], int] = defaultdict(int)
    body = map_text.split("Linker script and memory map", 1)[-1]
    section: str | None = None
    pending = False
    for line in body.splitlines():
        out = _OUTPUT.match(line)
        if out:
            section, pending = kind(out.group(1)), False
            continue
        head = _INPUT_HEAD.match(line)
        if head:
            pending = head.group(2) is None
            if not pending:
                _add(sizes, section, head.group(4), int(head.group(3), 16))
            continue
        tail = _INPUT_TAIL.match(line) if pending else None
        if tail:
            _add(sizes, section, tail.group(2), int(tail.group(1), 16))
        pending = False
    return sizes


def _add(sizes: dict[tuple[str, str], int], section: str | None, obj: str, size: int) -> None:
    comp = component(obj)
    if section is not None and comp is not None:
        sizes[(comp, section)] += size


def measure(model: Path, allocator: str, board: str, workdir: Path) -> list[int]:
    gen = generate_from_file(model, PlanOptions(allocator=Allocator(allocator)))
    target = resolve_target(load_board(board), emulate=True)
    result = build(gen, target, workdir / f"{model.stem}-{allocator}")
    sizes = linked_sizes((result.directory / "model.map").read_text())
    text = [sizes[(c, ".text")] for c in COMPONENTS]
    ram = sum(sizes[(c, k)] for c in COMPONENTS for k in (".data", ".bss"))
    rodata = sum(sizes[(c, ".rodata")] for c in COMPONENTS)
    code = firmware_sizes(result.executable, target).code
    return [*text, sum(text), rodata, ram, code]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--board", default="nucleo-f767")
    parser.add_argument("--allocator", action="append", choices=ALLOCATORS)
    args = parser.parse_args()
    models = args.models or [SHARED / "models" / f"{m}.tflite" for m in DEFAULT_MODELS]
    allocators = args.allocator or list(ALLOCATORS)
    print(f"board: {args.board}, optimised kernels, -O2, --gc-sections; bytes kept by the link")
    print(
        "| model | allocator | interpreter .text | allocator .text | kernels .text "
        "| runtime .text | runtime .rodata | runtime .data+.bss | firmware code |"
    )
    print("|---" * 9 + "|")
    with tempfile.TemporaryDirectory(prefix="mcugen-bench-size-") as tmp:
        for model in models:
            for allocator in allocators:
                try:
                    cells = measure(model, allocator, args.board, Path(tmp))
                except McugenError as err:
                    print(f"| {model.stem} | {allocator} | error: {err.line()} |", flush=True)
                    continue
                row = " | ".join(f"{v:,}" for v in cells)
                print(f"| {model.stem} | {allocator} | {row} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
