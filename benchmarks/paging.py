"""Paging schedules: modelled cost of the heuristic and the exact pager against the lower bound.

For every model in ../shared/models that mcugen plans and the generated irregular graphs
(testgraphs.benchmark_suite), plans the buffers (default order, the planned allocator's
whole buffers) and pages them through 1/2 and 1/4 of that arena, under two cost models: copies
only (1 cycle per byte each way; kernels never work in slow memory, so an operator whose inputs
and outputs exceed the budget makes it impossible: the shortfall is printed) and memory-mapped
slow memory (the same copies, 4 cycles per byte for a kernel working in place there). One
markdown row per model, budget and cost model: bytes copied, modelled kilocycles of `belady` and
`cpsat`, the lower bound, the gap of each to it, what the whole arena in slow memory would cost,
and the planning work (CP-SAT deterministic units) and seconds. Planning time is measured here,
not in a timed test (issue 11: under 10 s for graphs of up to 300 operators).
Run: PYTHONPATH=. python benchmarks/paging.py [--quick] [--work UNITS] [--models DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan.dynamic import PLANNED
from mcugen.plan.paging import (
    CostModel,
    PagingError,
    PagingProblem,
    Schedule,
    get_pager,
    paging_problem,
    validate,
)
from testgraphs import benchmark_suite

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
COST_MODELS = {"copies": CostModel(1.0, 1.0), "mapped": CostModel(1.0, 1.0, 4.0)}
FRACTIONS = (2, 4)
QUICK_MODELS = ("mlperf_ic_resnet8_int8", "mlperf_kws_dscnn_int8", "mlperf_vww_mbv1_int8")


def models(args: argparse.Namespace) -> Iterator[tuple[str, Callable[[], Graph]]]:
    found = sorted(args.models.glob("*.tflite")) if args.models.is_dir() else []
    for path in found:
        if not args.quick or path.stem in QUICK_MODELS:
            yield path.stem, partial(load_model, path)
    yield from benchmark_suite(quick=args.quick)


def all_in_slow(problem: PagingProblem) -> int:
    """Millicycles when every buffer lives in slow memory (what a user does today)."""
    rate = problem.cost.slow_per_byte
    if rate is None:
        return 0
    return sum(b.size * rate * len(b.uses) for b in problem.buffers)


def kcycles(millicycles: int) -> str:
    return f"{millicycles / 1e6:,.1f}"


def gap(schedule: Schedule, bound: int) -> str:
    """How far above the best proven bound (the exact pager's: the solver's or bound.py's)."""
    if bound == 0:
        return "0 %" if schedule.cost == 0 else "inf"
    return f"{100 * (schedule.cost / bound - 1):.1f} %"


def row(name: str, ops: int, problem: PagingProblem, fraction: int, kind: str, work: float) -> str:
    head = f"| {name} | {ops} | 1/{fraction} = {problem.capacity:,} | {kind} "
    try:
        start = time.perf_counter()
        heuristic = get_pager("belady")(problem)
        middle = time.perf_counter()
        exact = get_pager("cpsat")(problem, budget=work)
        end = time.perf_counter()
    except PagingError as err:
        return head + f"| impossible: {err.what} |"
    validate(problem, heuristic)
    validate(problem, exact)
    slow = all_in_slow(problem)
    bound = exact.lower_bound
    return head + (
        f"| {heuristic.bytes_in + heuristic.bytes_out:,} | {exact.bytes_in + exact.bytes_out:,} "
        f"| {kcycles(heuristic.cost)} | {kcycles(exact.cost)} | {kcycles(exact.lower_bound)} "
        f"| {gap(heuristic, bound)} | {gap(exact, bound)} | {kcycles(slow) if slow else '-'} "
        f"| {exact.work:.2f} | {middle - start:.2f} | {end - middle:.2f} "
        f"| {exact.strategy} {exact.note} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three MLPerf models, four graphs")
    parser.add_argument("--work", type=float, default=None, help="CP-SAT work units per plan")
    parser.add_argument("--models", type=Path, default=SHARED_MODELS)
    args = parser.parse_args()
    print(
        "| model | ops | budget B | cost model | copied B belady | copied B cpsat "
        "| kcycles belady | kcycles cpsat | kcycles bound | gap belady | gap cpsat "
        "| kcycles all in slow | cpsat work | s belady | s cpsat | kept |"
    )
    print("|---" * 16 + "|")
    for name, load in models(args):
        try:
            graph, _, plan = prepare(load(), PlanOptions(allocator=PLANNED))
        except McugenError as err:
            print(f"| {name} | error: {err.line()} |", flush=True)
            continue
        for fraction in FRACTIONS:
            capacity = plan.arena_bytes // fraction // 16 * 16
            for kind, cost in COST_MODELS.items():
                problem = paging_problem(graph, plan.order, plan.buffers, capacity, cost)
                print(row(name, len(plan.order), problem, fraction, kind, args.work), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
