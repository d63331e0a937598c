"""Training schedules: mcugen's exact CP-SAT model against POET's plain MILP on CBC and HiGHS.

For each case (a training problem of an MLPerf Tiny model, or a synthetic chain) and RAM budget
(a fraction of the store-all peak; a budget below the largest node with its inputs,
`cpsat.least_ram`, is skipped), one markdown row: mcugen's schedulers `poet`, `paging`, `remat`
(CP-SAT, `--work` deterministic units each) and `greedy`, then POET's plain MILP solved by CBC
(OR-Tools' pywraplp) and by HiGHS (highspy), each within `--time-limit` wall seconds. A solver's
cell is: wall seconds (model building included), status (optimal, feasible, infeasible: proven
to have no schedule, none: nothing found in the limit), objective, and its gap to the best bound
that solver proves (greedy proves none). Every solver runs on one thread.

POET-plain is the MILP of POET (Patil et al., ICML 2022) as its solver states it (benchmarks/
poet_milp.py gives its rows, what mcugen adds, and how its solutions map to mcugen stages and back);
it counts memory in its own way, so its optimum is never below mcugen's when both are proven.

Default: KWS last:3, IC last:4, VWW last:10, and the same models trained whole (kws-all, ic-all,
vww-all: 43, 48 and 106 nodes) and MobileNetV2 trained whole (mbv2-all, 241 nodes) (int8,
../shared/models, PageCosts(2, 2)), and the synthetic chains of 40, 80, 150 and 300 nodes, at 0.9,
0.7 and 0.5 of the store-all peak, `--time-limit 30`, `--work 10`, `--gap 0.01`. POET-plain runs on
graphs up to `--milp-nodes` (110): above it, its model (7 n^2 columns) takes minutes to build and
CBC overruns its limit in preprocessing (chain150: 168k columns and 213k rows). Cases: the names
above, chainN (N nodes), or STEM:TRAINABLE for another model of ../shared/models.
Run: PYTHONPATH=. python benchmarks/schedule_solvers.py [--cases C ...] [--time-limit S]
[--work UNITS] [--fractions F ...]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from poet_milp import (
    Milp,
    Poet,
    Solved,
    milp_values,
    poet_milp,
    poet_schedule,
    solve_cbc,
    solve_highs,
    solves,
)

from mcugen.errors import McugenError
from mcugen.train.schedule import (
    SCHEDULERS,
    Budgets,
    Node,
    Schedule,
    ScheduleError,
    ScheduleInvalid,
    ScheduleProblem,
    simulate,
    validate,
)
from mcugen.train.schedule.cpsat import least_ram

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
MODELS = {
    "kws": ("mlperf_kws_dscnn_int8", "last:3"),
    "ic": ("mlperf_ic_resnet8_int8", "last:4"),
    "vww": ("mlperf_vww_mbv1_int8", "last:10"),
    "kws-all": ("mlperf_kws_dscnn_int8", "last:10"),
    "ic-all": ("mlperf_ic_resnet8_int8", "last:10"),
    "vww-all": ("mlperf_vww_mbv1_int8", "last:28"),
    "mbv2-all": ("tflm_mobilenet_v2_int8", "last:53"),
}
DEFAULT_CASES = [
    "kws",
    "ic",
    "vww",
    "kws-all",
    "ic-all",
    "vww-all",
    "mbv2-all",
    "chain40",
    "chain80",
    "chain150",
    "chain300",
]
FRACTIONS = (0.9, 0.7, 0.5)
MILP_MAX_NODES = 110  # above it POET-plain's model takes minutes to build and CBC to presolve
MCUGEN_SOLVERS = ("poet", "paging", "remat", "greedy")
PAGE_PER_BYTE = 2  # as PageCosts(2, 2): out and in, objective and cycles


# --- cases ------------------------------------------------------------------------------------


def model_problem(stem: str, trainable: str) -> ScheduleProblem:
    """The problem `mcugen train --ram-budget` solves for the model: the planner's order,
    estimated cycles, PageCosts(2, 2)."""
    from mcugen.model.tflite_import import load_model
    from mcugen.options import PlanOptions
    from mcugen.pipeline import generate
    from mcugen.train.graph import build_training_graph
    from mcugen.train.options import TrainOptions
    from mcugen.train.schedule.training import PageCosts, estimated_cycles, training_problem

    tg = build_training_graph(
        load_model(SHARED / f"{stem}.tflite"), TrainOptions(trainable=trainable)
    )
    order = generate(tg.graph, options=PlanOptions(rewrites=False)).plan.order
    costs = PageCosts(PAGE_PER_BYTE, PAGE_PER_BYTE)
    return training_problem(tg.graph, estimated_cycles(tg.graph), costs, order)


def chain_problem(n: int) -> ScheduleProblem:
    """A training-like chain of n nodes, seeded by n: the input, n/2 - 2 forward nodes each
    reading the previous one, the loss (16 bytes, the output), then n/2 backward nodes, the j-th
    reading the (j-1)-th and the forward value n/2 - 1 - j (the input of layer n/2 - j). Sizes are
    1 to 32 KiB; forward costs 1 to 48 per byte, a backward node twice its layer's. Even backward
    nodes from the second on update their layer's weights: they never run again, and that layer's
    forward node may run again only up to them."""
    rng = random.Random(n)
    half = n // 2
    sizes = [16 * rng.randint(64, 2048) for _ in range(n)]
    rates = [rng.randint(1, 48) for _ in range(n)]
    until = {half - j: half + j for j in range(2, half, 2)}
    nodes = [Node("input", sizes[0], 0, 0, recomputable=False)]
    for i in range(1, half):
        loss = i == half - 1
        size = 16 if loss else sizes[i]
        cost = size * rates[i]
        nodes.append(
            Node(f"f{i}", size, cost, cost, (i - 1,), recompute_until=until.get(i), output=loss)
        )
    for j in range(half):
        reads = (half - 1 - j,) if j == 0 else (half + j - 1, half - 1 - j)
        layer = half - j
        cost = 2 * (nodes[layer].cost if layer < half else sizes[half + j])
        nodes.append(
            Node(f"b{j}", sizes[half + j], cost, cost, reads, recomputable=j < 2 or j % 2 == 1)
        )
    return ScheduleProblem(
        tuple(nodes),
        page_out_cost=PAGE_PER_BYTE,
        page_in_cost=PAGE_PER_BYTE,
        page_out_time=PAGE_PER_BYTE,
        page_in_time=PAGE_PER_BYTE,
    )


def case_problem(case: str) -> ScheduleProblem:
    if case.startswith("chain") and case[5:].isdigit():
        return chain_problem(int(case[5:]))
    stem, trainable = MODELS[case] if case in MODELS else case.split(":", 1)
    return model_problem(stem, trainable)


# --- rows -------------------------------------------------------------------------------------


@dataclass
class Cell:
    seconds: float
    status: str
    objective: float | None = None
    bound: float | None = None

    def text(self) -> str:
        parts = [f"{self.seconds:.1f} s", self.status]
        if self.objective is None and self.bound is not None and abs(self.bound) < 1e30:
            parts.append(f"bound {self.bound:,.0f}")
        if self.objective is not None:
            parts.append(f"{self.objective:,.0f}")
            if self.bound is None:
                parts.append("no bound")
            else:
                gap = 0.0 if self.objective == 0 else (self.objective - self.bound) / self.objective
                parts.append(f"gap {100 * max(gap, 0.0):.2f} %")
        return "; ".join(parts)


def mcugen_cell(
    problem: ScheduleProblem, name: str, budget: int, work: float, gap: float
) -> tuple[Cell, Schedule | None]:
    start = time.perf_counter()
    try:
        schedule = SCHEDULERS.get(name)(problem, Budgets(ram=budget, work=work, gap=gap))
    except ScheduleError as exc:
        status = "infeasible" if exc.what.startswith("no schedule exists") else "none"
        return Cell(time.perf_counter() - start, status), None
    seconds = time.perf_counter() - start
    cost = validate(problem, schedule, ram_budget=budget).cost
    status = "optimal" if schedule.optimal else "feasible"
    return Cell(seconds, status, cost, schedule.lower_bound), schedule


def poet_cells(
    problem: ScheduleProblem,
    poet: Poet,
    solve: Callable[[Milp, float], Solved],
    limit: float,
    budget: int,
    witness: str | None,
) -> tuple[Cell, str]:
    """The solver's cell and the verdict on its schedule mapped to mcugen. `witness`: a known
    solution of the MILP (an mcugen schedule in POET's space), against a claim of infeasibility."""
    solved = solve(poet.milp, limit)
    cell = Cell(solved.seconds, solved.status, solved.objective, solved.bound)
    if solved.status == "infeasible" and witness is not None:
        cell.status = f"infeasible (wrong: {witness})"
    if solved.values is None:
        return cell, "-"
    schedule = poet_schedule(problem, poet, solved.values)
    try:
        outcome = validate(problem, schedule, ram_budget=budget)
    except ScheduleInvalid as exc:
        return cell, f"invalid: {exc}"
    return cell, f"valid, cost {outcome.cost:,}"


def rows(
    case: str, fractions: tuple[float, ...], limit: float, work: float, gap: float, milp_nodes: int
) -> Iterator[str]:
    problem = case_problem(case)
    n = len(problem.nodes)
    base = simulate(problem, SCHEDULERS.get("store_all")(problem, Budgets()))
    least, _ = least_ram(problem)
    for fraction in fractions:
        budget = int(base.peak * fraction)
        head = [case, str(n), f"{budget:,} ({fraction:g})", f"{base.cost:,}"]
        if budget < least:
            yield cells([*head, f"skipped: under the least RAM, {least:,} B"])
            continue
        out = []
        poet = poet_milp(problem, budget) if n <= milp_nodes else None
        witness = None
        for name in MCUGEN_SOLVERS:
            cell, schedule = mcugen_cell(problem, name, budget, work, gap)
            out.append(cell.text())
            if name == "poet":
                over = "-"
                if cell.objective is not None and cell.bound is not None:
                    extra = cell.objective - base.cost
                    over = (
                        f"{100 * (cell.objective - cell.bound) / extra:.1f} %" if extra else "0 %"
                    )
                out.append(over)
            if poet is not None and witness is None and schedule is not None:
                values = milp_values(problem, poet, schedule)
                if solves(poet.milp, values):
                    objective = sum(c * x for c, x in zip(poet.milp.cost, values, strict=True))
                    witness = f"mcugen's {name} schedule solves it at {objective:,.0f}"
        if poet is None:
            columns = 7 * n * n // 1000
            skipped = f"not run: about {columns}k columns (over {milp_nodes} nodes)"
            yield cells([*head, *out, "-", skipped, "-", skipped, "-"])
            continue
        size = f"{len(poet.milp.lower) / 1000:.0f}k x {len(poet.milp.rows) / 1000:.0f}k"
        for solve in (solve_cbc, solve_highs):
            cell, verdict = poet_cells(problem, poet, solve, limit, budget, witness)
            out += [cell.text(), verdict]
        yield cells([*head, *out[:5], size, *out[5:]])


def cells(values: list[str]) -> str:
    return "| " + " | ".join(values) + " |"


FOOTNOTE = """\
Cells: wall seconds (model building included); status; objective; gap to the solver's own best
bound (its bound alone when it found nothing), as a share of the objective (the MILP convention).
mcugen's schedulers stop within --gap of their bound. "poet's gap over store-all": the same gap as a
share of what the schedule costs over store-all (how much of the overhead the bound cannot yet
explain; 0 % is proven optimal). Budgets are bytes (fraction of the store-all peak).
MILP: POET-plain's columns x rows.
POET-plain counts memory as POET's MILP does, not as mcugen's program.py: a value paged in during
stage t counts only from stage t + 1 (mapped to mcugen's page-in at t + 1), and a value is paged
out only from RAM held at a stage's start, so it stays resident one stage longer than in mcugen;
outputs must stay in RAM to the end (an addition to POET). Its optimum is therefore never below
mcugen's and may be above it. "mapped": the POET-plain solution as mcugen stages, checked by
validate(problem, schedule, ram_budget=budget), with its mcugen cost (below the objective when the
mapping drops actions mcugen forbids or ignores: redundant recomputations, page-ins, page-outs)."""


def calibration() -> float:
    """Seconds for a fixed pure-Python loop: the wall times of a table are comparable with
    another's only at the same figure."""
    start = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i * i
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=DEFAULT_CASES)
    parser.add_argument("--time-limit", type=float, default=30.0, help="seconds per MILP solve")
    parser.add_argument("--work", type=float, default=10.0, help="CP-SAT deterministic units")
    parser.add_argument(
        "--gap", type=float, default=0.01, help="mcugen's schedulers stop within this of the bound"
    )
    parser.add_argument(
        "--milp-nodes", type=int, default=MILP_MAX_NODES, help="largest graph given to POET-plain"
    )
    parser.add_argument("--fractions", type=float, nargs="+", default=list(FRACTIONS))
    args = parser.parse_args(argv)
    if any(c in MODELS or ":" in c for c in args.cases) and not SHARED.is_dir():
        print(f"needs the shared models in {SHARED}", file=sys.stderr)
        return 2
    print(
        f"MILP time limit {args.time_limit:g} s; CP-SAT work {args.work:g}; mcugen's gap "
        f"{args.gap:g}; one thread each; page costs {PAGE_PER_BYTE} per byte each way; "
        f"this machine's speed: {calibration():.2f} s for 10 million Python additions (the wall "
        "times scale with it)"
    )
    print()
    head = [
        "case",
        "nodes",
        "budget B",
        "store-all cost",
        "poet",
        "poet's gap over store-all",
        *MCUGEN_SOLVERS[1:],
        "MILP",
        "POET-plain CBC",
        "CBC mapped",
        "POET-plain HiGHS",
        "HiGHS mapped",
    ]
    print(cells(head))
    print("|" + "---|" * len(head))
    for case in args.cases:
        try:
            fractions = tuple(args.fractions)
            for line in rows(
                case, fractions, args.time_limit, args.work, args.gap, args.milp_nodes
            ):
                print(line, flush=True)
        except (McugenError, OSError, KeyError, ValueError) as exc:
            print(cells([case, f"error: {exc}"]), flush=True)
    print()
    print(FOOTNOTE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
