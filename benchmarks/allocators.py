"""Allocator modes side by side: arena, bytes moved and instructions per inference.

For each model: the arena of static offsets (the default plan, whose layout packs buffer profiles
of convolutions in place), of the compacting and planned allocators (both the peak live bytes of
their order; they move whole buffers, so they plan without profiles and can need more than static
offsets), the bytes each moves per inference, and instructions per inference on a board's QEMU
twin (default nucleo-f767 -> mps2-an500, Cortex-M7, `-icount shift=0`), one seeded input: the
dynamic builds and static offsets for the very same order and buffers (`pipeline.with_allocator`,
as `mcugen run` does), whose difference is the cost of the moves and bookkeeping.
Models: the MLPerf Tiny int8 models and person_detect from ../shared/models (when present) and
the quick (or, `--full-suite`, the full) suite of generated graphs (testgraphs/).
Run: python benchmarks/allocators.py [--board B] [--no-generated | --full-suite] [MODEL...]
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate, with_allocator
from mcugen.plan.dynamic import ALLOCATORS, STATIC, Allocator
from testgraphs import benchmark_suite

DYNAMIC = [a for a in ALLOCATORS if a != STATIC]

SHARED = Path(__file__).resolve().parents[2] / "shared"
REAL_MODELS = [
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
    "mlperf_sww_int8",
    "tflm_person_detect_int8",
]


def instructions(gen: Generated, target: Target, workdir: Path) -> int:
    result = build(gen, target, workdir)
    sample = random_inputs(gen.graph, 0)
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, [sample], emulated=True)
    return run.instructions(run.ticks_per_inference[0])


def measure_row(name: str, graph: Graph, target: Target, workdir: Path) -> str:
    arena: dict[str, int] = {}
    moved: dict[str, int] = {}
    instr: dict[str, int] = {}
    base: dict[str, int] = {}
    for allocator in ALLOCATORS:
        mode = Allocator(allocator)
        gen = generate(graph, model_name=name, options=PlanOptions(allocator=mode))
        arena[allocator] = gen.view_model.arena_bytes
        moved[allocator] = gen.dynamic.moved_bytes if gen.dynamic else 0
        if allocator == STATIC:
            continue  # its plan packs buffer profiles; the overhead needs the same buffers
        instr[allocator] = instructions(gen, target, workdir / f"{name}-{allocator}")
        same = with_allocator(gen, STATIC)
        base[allocator] = instructions(same, target, workdir / f"{name}-{allocator}-static")
    cells = [name]
    cells += [f"{arena[a]:,}" for a in ALLOCATORS]
    saved = arena[STATIC] - arena["planned"]
    cells.append(f"{saved:,} ({100 * saved / max(arena[STATIC], 1):.1f}%)")
    cells += [f"{moved[a]:,}" for a in DYNAMIC]
    cells.append(f"{base[DYNAMIC[0]]:,}")
    cells += [f"{instr[a]:,}" for a in DYNAMIC]
    cells += [f"{100 * (instr[a] - base[a]) / base[a]:+.2f}%" for a in DYNAMIC]
    return "| " + " | ".join(cells) + " |"


def models(args: argparse.Namespace) -> list[tuple[str, Callable[[], Graph]]]:
    paths = args.models or [
        p for p in (SHARED / "models" / f"{m}.tflite" for m in REAL_MODELS) if p.is_file()
    ]
    chosen: list[tuple[str, Callable[[], Graph]]] = [
        (p.stem, functools.partial(load_model, p)) for p in paths
    ]
    if not args.no_generated and not args.models:
        chosen += benchmark_suite(quick=not args.full_suite)
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--board", default="nucleo-f767")
    parser.add_argument("--no-generated", action="store_true", help="skip the generated graphs")
    parser.add_argument("--full-suite", action="store_true", help="all 12 generated graphs")
    args = parser.parse_args()
    target = resolve_target(load_board(args.board), emulate=True)
    print(f"board: {args.board} (QEMU twin, -icount shift=0), optimised kernels; one seeded input")
    print(
        "| model | arena static B | arena compacting B | arena planned B | saved vs static "
        "| moved compacting B | moved planned B | instr. same plan static | instr. compacting "
        "| instr. planned | overhead compacting | overhead planned |"
    )
    print("|---" * 12 + "|")
    with tempfile.TemporaryDirectory(prefix="mcugen-bench-alloc-") as tmp:
        for name, load in models(args):
            try:
                print(measure_row(name, load(), target, Path(tmp)), flush=True)
            except McugenError as err:
                print(f"| {name} | error: {err.line()} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
