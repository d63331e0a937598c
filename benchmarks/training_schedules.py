"""Fine-tuning under a RAM budget on the twins: `mcugen train --ram-budget` against store-all.

For each model and trainable choice: the store-all arena (stored order, TFLM's greedy-by-size
layout, nothing shared: the baseline of the fine-tuning issue), then `mcugen train` on the
NUCLEO-F767ZI twin without a budget, and on the STM32F746G-DISCO twin (SDRAM behind the FMC) at
fractions of the store-all arena, two samples, one epoch. A row gives the arena in RAM, the RAM
of the linked firmware, where the model state is (the RAM, or the SDRAM when the RAM cannot hold
it: IC's last block with 232,752 B of weights, VWW's with 275,472 B), what the schedule
recomputed, what the pager moves per step and the cycles it models for that (copies and in-place
SDRAM accesses, which QEMU does not time), the instructions per step on the twin, and whether the
tuned model equals the store-all one byte for byte. About 3 minutes.
`--smallest` adds, per model, the smallest budget (to 256 B, by bisection) with which
`mcugen train` succeeds on the disco-f746ng twin, with kernels on the SDRAM in place and with
copies only (every operand of the arena in RAM, as POET's model has it; the state stays where it
is), each with a row of its figures: about 20 minutes more.
Run: python benchmarks/training_schedules.py [--fractions F,F] [--smallest] [MODEL:TRAINABLE...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from mcugen.cli import main as mcugen
from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
DEFAULT = [
    "mlperf_kws_dscnn_int8:last:3",
    "mlperf_ic_resnet8_int8:last:1",
    "mlperf_vww_mbv1_int8:last:1",
    "mlperf_ic_resnet8_int8:last:4",
    "mlperf_vww_mbv1_int8:last:3",
]
STORE_ALL = PlanOptions(rewrites=False, order="stored", layout="greedy_by_size", in_place=False)


def train(argv: list[str], *, check: bool = True) -> dict | None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = mcugen([*argv, "--json"])
    if code != 0:
        if check:
            raise SystemExit(f"mcugen {' '.join(argv)} failed ({code}): {err.getvalue()}")
        return None
    result: dict = json.loads(out.getvalue())
    return result


def smallest(argv: list[str], top: int) -> int:
    """The smallest budget (to 256 B) in (0, top] with which `argv` succeeds."""
    low, high = 0, top  # low fails (or is 0), high succeeds
    while high - low > 256:
        middle = (low + high) // 2
        if train([*argv, "--ram-budget", str(middle)], check=False) is None:
            low = middle
        else:
            high = middle
    return high


def figures(report: dict, same: bool) -> list[str]:
    """A run's columns after the twin: arena, RAM as linked, where the state is, what the
    schedule recomputed, what the pager moves and models, instructions, the same model or not."""
    sched, paged, state = report["schedule"] or {}, report["paging"] or {}, report["state"]
    moved = paged.get("bytes_out_per_step", 0) + paged.get("bytes_in_per_step", 0)
    return [
        f"{report['arena_bytes']:,}",
        f"{state['ram_bytes']:,}",
        f"{state['memory']} {state['bytes']:,}",
        str(len(sched.get("recomputed", []))),
        f"{moved:,}",
        f"{paged.get('modelled_cost_per_step', 0):,.0f}",
        f"{max(report['per_step']):,}",
        "yes" if same else "NO",
    ]


def rows(spec: str, fractions: list[float], work: Path, least: bool) -> list[list[str]]:
    stem, trainable = spec.split(":", 1)
    path = SHARED / f"{stem}.tflite"
    graph = load_model(path)
    tg = build_training_graph(graph, TrainOptions(trainable=trainable))
    store_all = generate(tg.graph, options=STORE_ALL).plan.arena_bytes
    rng = np.random.default_rng(1)
    x_t = graph.tensors[graph.inputs[0]]
    x = rng.integers(-100, 101, (2, *x_t.shape[1:]), dtype=np.int8)
    classes = graph.tensors[graph.outputs[0]].shape[-1]
    data = work / f"{stem}.npz"
    np.savez(data, x=x, y=np.arange(2) % classes)
    base = ["train", str(path), "--data", str(data), "--trainable", trainable, "--emulate"]
    plain_out = work / f"{stem}-plain.tflite"
    plain = train([*base, "--board", "nucleo-f767", "-o", str(plain_out)])
    assert plain is not None
    name = stem.replace("mlperf_", "").replace("_int8", "")
    head = [name, trainable, f"{store_all:,}"]
    result = [[*head, "-", "nucleo-f767", *figures(plain, True)]]
    disco = [*base, "--board", "disco-f746ng"]

    def budget_row(label: str, budget: int, extra: list[str]) -> list[str]:
        out = work / f"{stem}-{budget}.tflite"
        r = train([*disco, *extra, "--ram-budget", str(budget), "-o", str(out)])
        assert r is not None
        same = out.read_bytes() == plain_out.read_bytes()
        return [*head, label, "disco-f746ng", *figures(r, same)]

    for fraction in fractions:
        budget = int(store_all * fraction)
        result.append(budget_row(f"{budget:,} ({fraction:.0%})", budget, []))
    if least:
        for mode, extra in (("in place", []), ("copies only", ["--copies-only"])):
            budget = smallest([*disco, *extra], store_all)
            share = f"{budget / store_all:.0%}"
            result.append(budget_row(f"smallest, {mode}: {budget:,} ({share})", budget, extra))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", default=DEFAULT)
    parser.add_argument("--fractions", default="0.5,0.25")
    parser.add_argument("--smallest", action="store_true", help="bisect the smallest budget")
    args = parser.parse_args(argv)
    if not SHARED.is_dir():
        print(f"needs the shared models in {SHARED}", file=sys.stderr)
        return 2
    fractions = [float(f) for f in args.fractions.split(",")]
    head = [
        "model",
        "trainable",
        "store-all arena B",
        "budget B",
        "twin",
        "arena B",
        "RAM B (linked)",
        "state B",
        "recomputed",
        "paged B/step",
        "modelled paging cycles/step",
        "instr./step",
        "same model",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    with tempfile.TemporaryDirectory(prefix="mcugen-schedules-") as tmp:
        for spec in args.specs:
            for row in rows(spec, fractions, Path(tmp), args.smallest):
                print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
