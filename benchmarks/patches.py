"""Patch stages (issue 17): each model's arena against the MACs its patch stage adds.

For every shared model (../shared/models) and the 12 generated irregular graphs
(testgraphs/ benchmark_suite): TFLM's head (../shared/ANCHORS.md for the shared
models, measured with tflite_micro for the generated ones), mcugen's arena run whole, and with
a patch stage at each MAC budget: the arena, the grid, the MACs added, and the planning time at
the default budget (patches on; median of 3 fresh processes, OR-Tools imported first). Then the
mean TFLM head / arena over the generated graphs.
`--uncapped` prints instead, per generated graph, the search's estimate with its work caps
lifted, at 15 % and at any MAC cost: how far one stage could go on them at all.
`--verify` runs `mcugen verify` on the host (5 samples against TFLM) for every model and budget
with a stage, and exits 1 when one differs.
Run: python benchmarks/patches.py [--budgets 0.05,0.15,0.3] [--quick] [--uncapped | --verify]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import mean

from mcugen.codegen.lower import op_traits
from mcugen.model.ir import Graph
from mcugen.model.macs import graph_macs
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan.patches import DEFAULT_OVERHEAD, patch_problem
from mcugen.plan.patches.search import all_grids, plan_stage
from mcugen.reference import tflm_graph_head
from mcugen.report.patches import grids, macs_added
from testgraphs import benchmark_suite

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
QUICK = ("mlperf_vww_mbv1_int8", "tflm_person_detect_int8")


def anchored_heads() -> dict[str, int]:
    """TFLM head per model from ANCHORS.md's arena table."""
    path = SHARED / "ANCHORS.md"
    if not path.is_file():
        return {}
    found = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 5 and re.fullmatch(r"\d+", cells[4]):
            found[cells[0]] = int(cells[4])
    return found


def measured_head(graph: Graph) -> int | None:
    try:
        return tflm_graph_head(graph)
    except Exception:  # noqa: BLE001 - a model TFLM cannot plan gets no head
        return None


#: A MAC budget no stage reaches (10 times the model's MACs).
UNLIMITED = 10.0


def cell(graph: Graph, budget: float) -> tuple[str, int, float]:
    """'arena grid +x.x%' for one budget, the arena and the planning seconds."""
    start = time.perf_counter()
    _, _, plan = prepare(graph, PlanOptions(patch_overhead=budget, patch_when="always"))
    seconds = time.perf_counter() - start
    found = plan.patches
    if found is None or found.stage is None:
        return f"{plan.arena_bytes} -", plan.arena_bytes, seconds
    text = f"{plan.arena_bytes} {grids(plan)} {100 * macs_added(plan) / found.total_macs:+.1f}%"
    return text, plan.arena_bytes, seconds


def cold_seconds(name: str, runs: int = 3) -> float:
    """Planning seconds of model `name` at the default budget, each run in a fresh process as
    `mcugen plan` meets it (no cache of an earlier plan warm: codegen/lower caches per
    constant), the median of `runs` (one run varies up to 2x on this machine)."""
    command = [sys.executable, __file__, "--time-one", name]
    times = []
    for _ in range(runs):
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        times.append(float(done.stdout.split()[-1]))
    return sorted(times)[len(times) // 2]


def time_one(name: str) -> int:
    """Print the planning seconds of `name` at the default budget. OR-Tools is imported first:
    its import (0.5 s, pandas included) is the process's start, not planning."""
    import ortools.sat.python.cp_model  # noqa: F401

    (load,) = [load for found, load, _ in models(False) if found == name]
    graph = load()
    print(cell(graph, DEFAULT_OVERHEAD)[2])
    return 0


def uncapped(quick: bool) -> int:
    """Per generated graph, the search's best estimated arena with the work caps lifted (stages
    of any length, every end per start) at the default budget and at any MAC cost, and the mean
    TFLM head / arena over them: how far one patch stage could take these graphs at all."""
    print("| graph | TFLM head | whole | estimate, uncapped, <= 15 % | any MACs | seconds |")
    print("|---|---|---|---|---|---|")
    ratios: dict[float, list[float]] = {DEFAULT_OVERHEAD: [], UNLIMITED: []}
    for name, build in benchmark_suite(quick):
        graph, lowered, whole = prepare(build(), PlanOptions(patch_overhead=0))
        problem = patch_problem(
            graph, whole.order, op_traits(graph, lowered), whole.live_bytes, graph_macs(graph)
        )
        head = measured_head(build())
        assert head is not None, "tflite_micro measures the generated graphs' heads"
        cells = []
        start = time.perf_counter()
        for budget in ratios:
            found = plan_stage(problem, budget=budget, grids=all_grids, caps=(10**6, 10**6))
            arena = min(found.estimated_arena, whole.arena_bytes)
            ratios[budget].append(head / arena)
            cells.append(f"{arena} ({head / arena:.2f})")
        seconds = time.perf_counter() - start
        print(f"| {name} | {head} | {whole.arena_bytes} | {' | '.join(cells)} | {seconds:.2f} |")
    for budget, values in ratios.items():
        label = "any MACs" if budget == UNLIMITED else f"<= {100 * budget:g} % MACs"
        print(f"mean TFLM head / estimated arena, uncapped, {label}: {mean(values):.2f}")
    return 0


def verify(quick: bool, budgets: list[float]) -> int:
    """`mcugen verify` on the host (5 samples against TFLM) of every model and generated graph
    at each budget where a stage is kept (`mcugen plan --json` says which); exit 1 if any
    differs."""
    differ = 0
    with tempfile.TemporaryDirectory(prefix="mcugen-patches-") as tmp:
        for name, load, shared in models(quick):
            path = SHARED / "models" / f"{name}.tflite"
            if not shared:
                path = Path(tmp) / f"{name}.tflite"
                path.write_bytes(write_model(load()))
            for budget in budgets:
                flags = [str(path), "--patch-overhead", str(budget)]
                plan = _mcugen("plan", *flags, "--json", "--no-strategies")
                if plan.returncode != 0:
                    print(f"| {name} | {budget:g} | {plan.stderr.strip()[-90:]} |")
                    break
                stage = (json.loads(plan.stdout).get("patches") or {}).get("stage")
                if not stage:
                    continue
                run = _mcugen("verify", *flags)
                said = (run.stdout + run.stderr).strip().splitlines()[-1]
                exact = run.returncode == 0 and "all outputs match TFLM" in said
                differ += not exact
                grid = "x".join(map(str, stage["grid"]))
                print(f"| {name} | {budget:g} | {grid} | {'exact' if exact else said} |")
                sys.stdout.flush()
    print(f"\n{differ} run(s) differ from TFLM" if differ else "\nevery run equals TFLM")
    return 1 if differ else 0


def _mcugen(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mcugen.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def models(quick: bool) -> list[tuple[str, Callable[[], Graph], bool]]:
    todo: list[tuple[str, Callable[[], Graph], bool]] = []
    folder = SHARED / "models"
    for path in sorted(folder.glob("*.tflite")) if folder.is_dir() else []:
        if not quick or path.stem in QUICK:
            todo.append((path.stem, lambda p=path: load_model(p), True))  # type: ignore[misc]
    for name, build in benchmark_suite(quick):
        todo.append((name, build, False))
    return todo


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="0.05,0.15,0.3", help="MAC budgets, comma-separated")
    parser.add_argument("--quick", action="store_true", help="two shared models, 4 graphs")
    parser.add_argument("--time-one", default="", help=argparse.SUPPRESS)
    parser.add_argument(
        "--uncapped",
        action="store_true",
        help="the generated graphs' best estimate with no cap on stage length or MACs",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="run every model with a stage on the host against TFLM (mcugen verify)",
    )
    args = parser.parse_args(argv)
    if args.time_one:
        return time_one(args.time_one)
    if args.uncapped:
        return uncapped(args.quick)
    if args.verify:
        return verify(args.quick, [float(b) for b in args.budgets.split(",")])
    budgets = [float(b) for b in args.budgets.split(",")]
    heads = anchored_heads()
    header = ["model", "TFLM head", "whole", *(f"<= {100 * b:g}% MACs" for b in budgets)]
    print("| " + " | ".join([*header, "TFLM / arena", "plan s"]) + " |")
    print("|" + "---|" * (len(header) + 2))
    ratios = []
    for name, load, shared in models(args.quick):
        graph = load()
        try:
            _, _, whole = prepare(graph, PlanOptions())
            cells = [cell(graph, b) for b in budgets]
            at_default = cell(graph, DEFAULT_OVERHEAD) if DEFAULT_OVERHEAD not in budgets else None
        except Exception as exc:  # noqa: BLE001 - one unsupported model must not stop the table
            print(f"| {name} | {str(exc).splitlines()[0][:70]} |")
            continue
        default = at_default or cells[budgets.index(DEFAULT_OVERHEAD)]
        head = heads.get(name) if shared else measured_head(graph)
        ratio = f"{head / default[1]:.2f}" if head else "-"
        if head and not shared:
            ratios.append(head / default[1])
        row = [name, str(head or "-"), str(whole.arena_bytes), *(c[0] for c in cells)]
        print("| " + " | ".join([*row, ratio, f"{cold_seconds(name):.2f}"]) + " |")
        sys.stdout.flush()
    if ratios:
        mean = sum(ratios) / len(ratios)
        print(f"\nmean TFLM head / arena over {len(ratios)} generated graphs at "
              f"{100 * DEFAULT_OVERHEAD:g}% MACs: {mean:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
