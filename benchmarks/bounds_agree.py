"""The strategy table against its bounds and the default, on every shared model (issue 31 item 7).

For each board (the host, nucleo-f767, disco-f746ng) and each shared model (and the generated
graphs on the host), `mcugen plan`'s table as `--json` gives it: every row planned as its flags
plan it. Prints one line per model: the default's arena, input copy and bound, the bound without
sharing (which bounds no plan that shares), the smallest other row, and what fails:
- "bound > arena": a row whose `arena_lower_bound` is above its arena;
- "auto loses": a row, other than TFLM's, with less arena plus input copy than (auto, auto),
  unless it is CP-SAT where auto did not try it (its note says so).
Exit 1 when anything fails. Run: python benchmarks/bounds_agree.py [--boards host,nucleo-f767]
[MODEL...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from mcugen.boards import load_board, resolve_target
from mcugen.commands._common import plan_options
from mcugen.commands.plan import plan_model, strategy_runs
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.plan.compare import TFLM_BASELINE, StrategyRun
from testgraphs import benchmark_suite

ROOT = Path(__file__).resolve().parents[1]
SHARED_MODELS = ROOT.parent / "shared" / "models"
BOARDS = ("host", "nucleo-f767", "disco-f746ng")


def runs_of(graph: Graph, board: str) -> tuple[tuple[StrategyRun, ...], str]:
    """The table `mcugen plan [--board B]` prints, and how the default plan runs."""
    target = None if board == "host" else resolve_target(load_board(board), emulate=False)
    args = argparse.Namespace(
        order="auto", layout="auto", no_inplace=False, no_rewrite=False, time_budget=None
    )
    planned = plan_model(graph, plan_options(args, firmware=target is not None, target=target))
    plan = planned.plan
    kind = "paged" if plan.paging else "patched" if plan.patches and plan.patches.stage else ""
    return strategy_runs(graph, planned), kind


def problems(runs: tuple[StrategyRun, ...]) -> list[str]:
    ok = [r for r in runs if not r.error]
    found = [f"{r.order}/{r.layout} error" for r in runs if r.error]
    found += [
        f"bound > arena {r.order}/{r.layout}" for r in ok if r.arena_lower_bound > r.arena_bytes
    ]
    auto = next(r for r in ok if (r.order, r.layout) == ("auto", "auto"))
    for r in ok:
        skipped = r.layout == "cpsat" and "CP-SAT not tried" in auto.note
        if (r.order, r.layout) != TFLM_BASELINE and not skipped:
            if r.arena_and_copy < auto.arena_and_copy:
                found.append(f"auto loses to {r.order}/{r.layout} ({r.arena_and_copy:,})")
    return found


def report(board: str, name: str, build: Callable[[], Graph]) -> bool:
    start = time.perf_counter()
    try:
        runs, kind = runs_of(build(), board)
    except Exception as exc:  # a model this board cannot take: say so, go on
        print(f"| {board} | {name} | {type(exc).__name__}: {str(exc)[:80]} | | | | | | |")
        return True
    auto = next(r for r in runs if (r.order, r.layout) == ("auto", "auto"))
    others = [
        r for r in runs if not r.error and r is not auto and (r.order, r.layout) != TFLM_BASELINE
    ]
    least = min(others, key=lambda r: r.arena_and_copy, default=auto)
    found = problems(runs)
    print(
        f"| {board} | {name} | {auto.arena_bytes:,} | {auto.input_copy_bytes:,} | "
        f"{auto.arena_lower_bound:,} | {auto.unshared_order_bound:,} | "
        f"{least.order}/{least.layout} {least.arena_and_copy:,} | {kind} | "
        f"{'; '.join(found) or 'ok'} ({time.perf_counter() - start:.1f} s) |",
        flush=True,
    )
    return not found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default=",".join(BOARDS))
    parser.add_argument("models", nargs="*", help="shared model names (default: all)")
    args = parser.parse_args()
    names = args.models or sorted(p.stem for p in SHARED_MODELS.glob("*.tflite"))
    print(
        "| board | model | arena | input copy | arena LB | unshared order bound "
        "| least other row (arena + copy) | plan | checks |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    good = True
    for board in args.boards.split(","):
        for name in names:
            path = SHARED_MODELS / f"{name}.tflite"
            if path.is_file():
                good &= report(board, name, partial(load_model, path))
        if board == "host" and not args.models:
            for name, build in benchmark_suite():
                good &= report(board, name, build)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
