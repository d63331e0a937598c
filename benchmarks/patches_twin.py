"""Patch stages on the NUCLEO-F767ZI's QEMU twin (issue 17): every shared model and generated graph
planned with patch stages at each MAC budget, built for the twin, run, and compared with TFLM.

Per model and budget: the grid kept, the arena whole and patched, the instructions per inference
whole and patched, the flash the firmware's tables and parameters take whole and patched (one
node, parameter block and tensor entry per tile and operator), and whether every output byte
equals TFLM's ("exact"), or why it did not run (a model whose arena does not fit the twin's RAM,
an operator the runtime lacks). The exit status is 1 when any run differs from TFLM.
Run: python benchmarks/patches_twin.py [--budgets 0.05,0.15,0.3] [--quick] [--models a,b]
    [--board mps2-an500] (a board with room for mobilenet_v2's 3.5 MB of weights)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.firmware.sizes import firmware_sizes
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.model.ir import Graph
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan.target import memory_target
from mcugen.reference import tflm_outputs
from mcugen.report.patches import grids

sys.path.insert(0, str(Path(__file__).resolve().parent))
from patches import SHARED, models  # noqa: E402

SEED = 7


@dataclass(frozen=True)
class Bench:
    """The emulated board the runs use and the firmware's plan options there (patches off)."""

    target: Target
    firmware: PlanOptions

    @classmethod
    def on(cls, board: str) -> Bench:
        target = resolve_target(load_board(board), emulate=True)
        options = PlanOptions(
            keep_input="auto",
            target=memory_target(target),
            core=target.port_board.core,
            patch_overhead=0,
        )
        return cls(target, options)


def run_on_twin(bench: Bench, gen: Generated, model: bytes, seed: int) -> tuple[int, bool, int]:
    """(instructions per inference, outputs equal TFLM's, flash bytes of tables and parameters
    as linked) of one random sample on the twin."""
    sample = [random_inputs(gen.graph, seed)]
    with tempfile.TemporaryDirectory(prefix="mcugen-patches-twin-") as tmp:
        result = build(gen, bench.target, Path(tmp) / "proj")
        tables = firmware_sizes(result.executable, bench.target).other_rodata
        with open_device(bench.target, result.executable, None) as link:
            run = run_samples(link, gen.graph, sample, emulated=True)
    ref = tflm_outputs(model, gen.graph, sample)
    exact = all(
        np.array_equal(o, r.reshape(o.shape))
        for ours, theirs in zip(run.outputs, ref, strict=True)
        for o, r in zip(ours, theirs, strict=True)
    )
    return run.instructions(run.ticks_per_inference[0]), exact, tables


def row(
    bench: Bench, name: str, model: bytes, graph: Graph, budget: float, whole: Whole
) -> tuple[str, bool]:
    """One table row: the model with patch stages at `budget` against `whole` (run once)."""
    options = replace(bench.firmware, patch_overhead=budget, patch_when="always")
    tiled = generate(graph, options=options)
    found = tiled.plan.patches
    if found is None or found.stage is None:
        return f"| {name} | {100 * budget:g} % | - | {whole.arena} | - | - | - | - | - |", True
    patched, exact, tables = run_on_twin(bench, tiled, model, SEED)
    base, base_exact, base_tables = whole.run(model)
    grid = grids(tiled.plan)
    cells = [
        name,
        f"{100 * budget:g} %",
        grid,
        str(whole.arena),
        str(tiled.plan.arena_bytes),
        str(base),
        f"{patched} ({100 * (patched / base - 1):+.1f} %)",
        f"{base_tables} -> {tables} ({tables - base_tables:+d})",
        "exact" if exact and base_exact else "DIFFERENT",
    ]
    return "| " + " | ".join(cells) + " |", exact and base_exact


class Whole:
    """The model planned whole; run on the twin once, when a patched row needs it."""

    def __init__(self, bench: Bench, graph: Graph) -> None:
        self.bench = bench
        self.gen = generate(graph, options=bench.firmware)
        self.arena = self.gen.plan.arena_bytes
        self._run: tuple[int, bool, int] | None = None

    def run(self, model: bytes) -> tuple[int, bool, int]:
        if self._run is None:
            self._run = run_on_twin(self.bench, self.gen, model, SEED)
        return self._run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="0.05,0.15,0.3", help="MAC budgets, comma-separated")
    parser.add_argument("--quick", action="store_true", help="two shared models, 4 graphs")
    parser.add_argument("--models", default="", help="only these models (comma-separated)")
    parser.add_argument(
        "--board", default="nucleo-f767", help="the emulated board (default nucleo-f767's twin)"
    )
    args = parser.parse_args(argv)
    bench = Bench.on(args.board)
    budgets = [float(b) for b in args.budgets.split(",")]
    wanted = {m for m in args.models.split(",") if m}
    print("| model | budget | grid | arena whole | arena patched | instructions whole | "
          "instructions patched | flash tables whole -> patched | vs TFLM |")  # fmt: skip
    print("|" + "---|" * 9)
    failed = 0
    for name, load, shared in models(args.quick):
        if wanted and name not in wanted:
            continue
        graph = load()
        model = (
            (SHARED / "models" / f"{name}.tflite").read_bytes() if shared else write_model(graph)
        )
        try:
            whole = Whole(bench, graph)
        except McugenError as exc:
            print(f"| {name} | - | {str(exc).splitlines()[0]} |")
            continue
        for budget in budgets:
            try:
                text, ok = row(bench, name, model, graph, budget, whole)
            except McugenError as exc:
                text, ok = f"| {name} | {100 * budget:g} % | {str(exc).splitlines()[0]} |", True
            failed += not ok
            print(text)
            sys.stdout.flush()
    print(f"\n{failed} run(s) differ from TFLM" if failed else "\nevery run equals TFLM")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
