"""Channel concatenation in place (issue 34 item 2): the arena with and without it.

Per generated graph (testgraphs.benchmark_suite and memory_bar's held-out stand-ins) and, with
`--shared`, every shared model with a concatenation: the default plan's arena with
`--no-concat-in-place` and without the flag, the concatenation inputs written in place, the
bytes of copies no longer made, and both planning times (one run each, in this process). With
`--patch-overhead F`, both plans use `--kernels memory` and patches within F (memory_bar's
third column).
Run: python benchmarks/concat_in_place.py [--shared] [--patch-overhead 0.15]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace

from memory_bar import HELD_OUT_LIKE, SHARED_MODELS

from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from testgraphs import benchmark_suite


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", action="store_true", help="also the shared models")
    parser.add_argument("--patch-overhead", type=float, default=None, metavar="F")
    args = parser.parse_args(argv)
    todo = list(benchmark_suite()) + HELD_OUT_LIKE
    if args.shared and SHARED_MODELS.is_dir():
        for path in sorted(SHARED_MODELS.glob("*.tflite")):
            graph = load_model(path)
            if any(op.opcode == "CONCATENATION" for op in graph.operators):
                todo.append((path.stem, lambda p=path: load_model(p)))  # type: ignore[misc]
    base = PlanOptions()
    if args.patch_overhead is not None:
        base = PlanOptions(
            kernels="memory", patch_overhead=args.patch_overhead, patch_when="always"
        )
    print(
        "| graph | arena, copies | arena, in place | saved | inputs in place | bytes not "
        "copied | plan s copies / in place |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, build in todo:
        runs = []
        for on in (False, True):
            start = time.perf_counter()
            plan = prepare(build(), replace(base, concat_in_place=on))[2]
            runs.append((plan, time.perf_counter() - start))
        (off, t_off), (on_plan, t_on) = runs
        copied = sum(s.nbytes for s in on_plan.channel_slices)
        print(
            f"| {name} | {off.arena_bytes:,} | {on_plan.arena_bytes:,} | "
            f"{off.arena_bytes - on_plan.arena_bytes:,} | {len(on_plan.channel_slices)} | "
            f"{copied:,} | {t_off:.2f} / {t_on:.2f} |"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
