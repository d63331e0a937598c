"""Training schedules: mcugen's exact CP-SAT model against POET's plain MILP on CBC and HiGHS.

For each case (a training problem of an MLPerf Tiny model, or a synthetic chain) and RAM budget
(a fraction of the store-all peak; a budget below the largest node with its inputs,
`cpsat.least_ram`, is skipped), one markdown row: mcugen's schedulers `poet`, `paging`, `remat`
(CP-SAT, `--work` deterministic units each) and `greedy`, then POET's plain MILP solved by CBC
(OR-Tools' pywraplp) and by HiGHS (highspy), each within `--time-limit` wall seconds. A solver's
cell is: wall seconds (model building included), status (optimal, feasible, infeasible: proven
to have no schedule, none: nothing found in the limit), objective, and its gap to the best bound
that solver proves (greedy proves none). Every solver runs on one thread.

POET-plain is the MILP of POET (Patil et al., ICML 2022) as its solver states it, written here for
a `ScheduleProblem` with stages T = nodes: binary T x T matrices R (computed in stage t), SRam (in
RAM at the start of stage t), SSd (in slow storage), MIn (paged in during stage t), MOut (paged
out during stage t), a continuous U[t][k] (RAM while node k runs in stage t, within [0, budget])
and a binary Free_E[t][e] per stage and edge (the edge's source leaves RAM after its reader):
- lower triangular: R, MIn, MOut zero above the diagonal, SRam and SSd zero on and above it;
  R[t][t] = 1 (here as variable bounds, which every presolve treats as POET's zero-sum rows);
- R[t][v] <= R[t][u] + SRam[t][u] per edge (u, v); SRam[t+1][i] <= SRam[t][i] + R[t][i] +
  MIn[t][i]; SSd[t+1][i] <= SSd[t][i] + MOut[t][i]; MIn <= SSd; MOut <= SRam;
- Checkmate's memory recurrence U[t][0] = size_0 R[t][0] + sum of size_i SRam[t][i], U[t][k+1] =
  U[t][k] + size_(k+1) R[t][k+1] - sum over the edges (i, k) of size_i Free_E, with Free_E forced
  to 1 exactly when it has no hazard (1 - Free_E <= hazards <= most hazards x (1 - Free_E), the
  hazards of (i, k) being: k not computed, i kept for t + 1, a later reader of i computed);
- minimise the sum of node.cost x R + in_cost(i) x MIn + out_cost(i) x MOut.
mcugen's problem maps on directly: sizes are cost_ram, node.cost the CPU cost, page costs per node
`problem.in_cost(i)[0]` / `problem.out_cost(i)[0]`, edges node.inputs. Additions POET lacks:
a node that may not run again at stage t (`recomputable`, `recompute_until`) has R[t][i] fixed to
0, and the outputs (a training graph's loss) must be in RAM at the end: R or SRam of the last
stage, and never freed in it (as if kept for a stage T). POET's paging switch is off only when the
problem has no slow memory. No warm start: POET gives none.

POET-plain counts memory in its own way, not in program.py's semantics, so its objective need not
equal mcugen's poet: a value paged in during stage t (MIn) is in RAM only from stage t + 1 (as
SRam) and counts only there, and a value can be paged out only from RAM it held at the start of a
stage (MOut <= SRam), so a value computed in stage t is paged out in stage t + 1 at the earliest and
is resident through it, where mcugen pages it out in its own stage. POET's space is thus smaller:
its optimum is never below mcugen's (when both are proven), and a tight budget can be infeasible
for it and not for mcugen. Each POET-plain solution is mapped back to mcugen stages and checked
with `validate(problem, schedule, ram_budget=budget)`: compute = the stage's R minus values already
in RAM; page_in at stage t + 1 = MIn[t] that lands in SRam[t+1] (the one-stage shift above, which
makes the two memory counts agree); page_out = MOut minus values already in slow storage (POET
may forget SSd and page out again; mcugen's storage is written once); keep = SRam[t+1] of values in
RAM during stage t, the outputs after the last stage. The actions dropped are ones POET allows and
mcugen forbids or ignores (a recomputation or page-in of a value already in RAM, a page-in never
landing in RAM, a second page-out); they only cost, so an optimal solution has none, and the
mapped cost (mcugen's simulate) is printed next to the verdict. One case is not exact: dropping a
redundant recomputation of v also drops v's reads, so an input of v that POET freed after v may
stay resident in mcugen, and validate may then report the schedule over the budget.
Conversely (`milp_values`), an mcugen schedule inside POET's space is a POET-plain solution; when a
MILP solver claims a row infeasible, each mcugen schedule of the row is checked against every bound
and row of the MILP, and a cell whose claim one of them refutes says so.

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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mcugen.errors import McugenError
from mcugen.train.schedule import (
    SCHEDULERS,
    Budgets,
    Node,
    Schedule,
    ScheduleError,
    ScheduleInvalid,
    ScheduleProblem,
    Stage,
    simulate,
    validate,
)
from mcugen.train.schedule.bound import silent_highs
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
INF = float("inf")


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


# --- POET's plain MILP ------------------------------------------------------------------------


@dataclass
class Milp:
    """A mixed-integer program in column and row form, built once for both solvers."""

    lower: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    integer: list[bool] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    rows: list[tuple[dict[int, float], float, float]] = field(default_factory=list)

    def var(self, lower: float, upper: float, integer: bool, cost: float = 0.0) -> int:
        self.lower.append(lower)
        self.upper.append(upper)
        self.integer.append(integer)
        self.cost.append(cost)
        return len(self.lower) - 1

    def row(self, terms: list[tuple[int, float]], lower: float, upper: float) -> None:
        coefficients: dict[int, float] = {}
        for col, value in terms:
            coefficients[col] = coefficients.get(col, 0.0) + value
        self.rows.append((coefficients, lower, upper))


@dataclass
class Poet:
    """POET's variables (column indices) for one problem and budget."""

    milp: Milp
    r: list[list[int]]
    s_ram: list[list[int]]
    s_ssd: list[list[int]]
    m_in: list[list[int]]
    m_out: list[list[int]]
    u: list[list[int]]
    free: list[list[int]]
    edges: list[tuple[int, int]]


def poet_milp(problem: ScheduleProblem, budget: int) -> Poet:
    nodes = problem.nodes
    n = len(nodes)
    paging = problem.paging
    size = [node.size for node in nodes]
    milp = Milp()

    def matrix(upper: Callable[[int, int], bool], cost: Callable[[int], float]) -> list[list[int]]:
        return [
            [milp.var(0, 1 if upper(t, i) else 0, True, cost(i)) for i in range(n)]
            for t in range(n)
        ]

    r = matrix(
        lambda t, i: i == t or (i < t and problem.may_recompute(i, t)), lambda i: nodes[i].cost
    )
    for t in range(n):
        milp.lower[r[t][t]] = 1
    s_ram = matrix(lambda t, i: i < t, lambda i: 0)
    s_ssd = matrix(lambda t, i: paging and i < t, lambda i: 0)
    m_in = matrix(lambda t, i: paging and i <= t, lambda i: problem.in_cost(i)[0] if paging else 0)
    m_out = matrix(
        lambda t, i: paging and i <= t, lambda i: problem.out_cost(i)[0] if paging else 0
    )
    u = [[milp.var(0, budget, False) for _ in range(n)] for _ in range(n)]
    edges = [(i, k) for k, node in enumerate(nodes) for i in sorted(set(node.inputs))]
    last = n - 1
    free = [[milp.var(0, 1, True) for _ in edges] for t in range(n)]

    # correctness: inputs resident, checkpoints carried, paging only what is there
    for t in range(n):
        for i, k in edges:
            milp.row([(r[t][k], 1), (r[t][i], -1), (s_ram[t][i], -1)], -INF, 0)
    for t in range(n - 1):
        for i in range(n):
            held = [(s_ram[t][i], -1.0), (r[t][i], -1.0), (m_in[t][i], -1.0)]
            milp.row([(s_ram[t + 1][i], 1), *held], -INF, 0)
            milp.row([(s_ssd[t + 1][i], 1), (s_ssd[t][i], -1), (m_out[t][i], -1)], -INF, 0)
    for t in range(n):
        for i in range(n):
            milp.row([(m_in[t][i], 1), (s_ssd[t][i], -1)], -INF, 0)
            milp.row([(m_out[t][i], 1), (s_ram[t][i], -1)], -INF, 0)
    for i, node in enumerate(nodes):
        if node.output:  # in RAM after the last stage (an addition: POET has no outputs)
            milp.row([(r[last][i], 1), (s_ram[last][i], 1)], 1, INF)

    # memory: Checkmate's recurrence with Free_E and its hazard bounds
    readers = problem.consumers
    by_reader: list[list[int]] = [[] for _ in range(n)]
    for e, (_, k) in enumerate(edges):
        by_reader[k].append(e)
    for t in range(n):
        for e, (i, k) in enumerate(edges):
            later = [j for j in readers[i] if j > k]
            # hazards = 1 - R[t][k] + SRam[t+1][i] + the R[t][j] of later readers j; an output
            # is kept after the last stage (SRam[T][i] = 1: the addition for outputs)
            constant = 1
            hazard = [(r[t][k], -1.0)] + [(r[t][j], 1.0) for j in later]
            if t < last:
                hazard.append((s_ram[t + 1][i], 1.0))
            elif nodes[i].output:
                constant += 1
            most = constant + len(later) + (1 if t < last else 0)
            negated = [(col, -value) for col, value in hazard]
            # 1 - F <= hazards, and most x (1 - F) >= hazards
            milp.row([(free[t][e], -1), *negated], -INF, constant - 1)
            milp.row([(free[t][e], -most), *negated], constant - most, INF)
        start = [(u[t][0], 1.0), (r[t][0], -size[0])]
        milp.row(start + [(s_ram[t][i], -size[i]) for i in range(n)], 0, 0)
        for k in range(n - 1):
            step = [(u[t][k + 1], 1.0), (u[t][k], -1.0), (r[t][k + 1], -size[k + 1])]
            step += [(free[t][e], size[edges[e][0]]) for e in by_reader[k]]
            milp.row(step, 0, 0)
    return Poet(milp, r, s_ram, s_ssd, m_in, m_out, u, free, edges)


@dataclass
class Solved:
    status: str  # optimal, feasible, infeasible, none, or an error
    seconds: float
    objective: float | None = None
    bound: float | None = None
    values: list[float] | None = None


def solve_cbc(milp: Milp, time_limit: float) -> Solved:
    from ortools.linear_solver import pywraplp

    start = time.perf_counter()
    solver = pywraplp.Solver.CreateSolver("CBC")
    if solver is None:
        return Solved("no CBC in OR-Tools", 0.0)
    inf = solver.infinity()

    def bound(x: float) -> float:
        return inf if x == INF else -inf if x == -INF else x

    xs = []
    for j, (lo, hi, integer) in enumerate(zip(milp.lower, milp.upper, milp.integer, strict=True)):
        xs.append(solver.IntVar(lo, hi, f"x{j}") if integer else solver.NumVar(lo, hi, f"x{j}"))
    for coefficients, lo, hi in milp.rows:
        row = solver.RowConstraint(bound(lo), bound(hi), "")
        for col, value in coefficients.items():
            row.SetCoefficient(xs[col], value)
    objective = solver.Objective()
    for col, value in enumerate(milp.cost):
        if value:
            objective.SetCoefficient(xs[col], value)
    objective.SetMinimization()
    parameters = pywraplp.MPSolverParameters()
    parameters.SetDoubleParam(parameters.RELATIVE_MIP_GAP, 0.0)
    solver.SetTimeLimit(int(time_limit * 1000))
    status = solver.Solve(parameters)
    seconds = time.perf_counter() - start
    if status in (solver.OPTIMAL, solver.FEASIBLE):
        return Solved(
            "optimal" if status == solver.OPTIMAL else "feasible",
            seconds,
            objective.Value(),
            objective.BestBound(),
            [x.solution_value() for x in xs],
        )
    if status == solver.INFEASIBLE:
        return Solved("infeasible", seconds)
    what = "none" if status == solver.NOT_SOLVED else f"CBC status {status}"
    return Solved(what, seconds, bound=objective.BestBound())


def solve_highs(milp: Milp, time_limit: float) -> Solved:
    import highspy

    start = time.perf_counter()
    h = silent_highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    lp = highspy.HighsLp()
    lp.num_col_ = len(milp.lower)
    lp.num_row_ = len(milp.rows)
    lp.col_cost_ = np.array(milp.cost, dtype=np.float64)
    lp.col_lower_ = np.array(milp.lower, dtype=np.float64)
    lp.col_upper_ = np.array(milp.upper, dtype=np.float64)
    inf = highspy.kHighsInf
    lp.row_lower_ = np.array([max(lo, -inf) for _, lo, _ in milp.rows], dtype=np.float64)
    lp.row_upper_ = np.array([min(hi, inf) for _, _, hi in milp.rows], dtype=np.float64)
    starts = [0]
    index: list[int] = []
    value: list[float] = []
    for coefficients, _, _ in milp.rows:
        for col, coefficient in sorted(coefficients.items()):
            index.append(col)
            value.append(coefficient)
        starts.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.num_col_ = lp.num_col_
    lp.a_matrix_.num_row_ = lp.num_row_
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value, dtype=np.float64)
    kinds = highspy.HighsVarType
    lp.integrality_ = [kinds.kInteger if x else kinds.kContinuous for x in milp.integer]
    h.passModel(lp)
    h.run()
    seconds = time.perf_counter() - start
    status = h.getModelStatus()
    info = h.getInfo()
    statuses = highspy.HighsModelStatus
    if status == statuses.kInfeasible:
        return Solved("infeasible", seconds)
    if info.primal_solution_status != 2:  # kSolutionStatusFeasible
        what = "none" if status == statuses.kTimeLimit else h.modelStatusToString(status)
        return Solved(what, seconds, bound=info.mip_dual_bound)
    return Solved(
        "optimal" if status == statuses.kOptimal else "feasible",
        seconds,
        info.objective_function_value,
        info.mip_dual_bound,
        list(h.getSolution().col_value),
    )


def poet_schedule(problem: ScheduleProblem, poet: Poet, values: list[float]) -> Schedule:
    """The solution as mcugen stages (see the module's docstring)."""
    n = len(problem.nodes)

    def on(matrix: list[list[int]], t: int) -> set[int]:
        return {i for i in range(n) if values[matrix[t][i]] > 0.5}

    stages = []
    kept: set[int] = set()  # from the previous stage
    paged_in: set[int] = set()  # at this stage: MIn of the previous one
    stored: set[int] = set()
    for t in range(n):
        ram = kept | paged_in
        compute = sorted((on(poet.r, t) - ram) | {t})
        page_out = on(poet.m_out, t) - stored
        if t + 1 < n:
            during = ram | set(compute)
            resident = on(poet.s_ram, t + 1)
            keep = resident & during
            next_in = (on(poet.m_in, t) & resident) - keep
        else:
            keep = {i for i, node in enumerate(problem.nodes) if node.output}
            next_in = set()
        stages.append(
            Stage(tuple(compute), frozenset(paged_in), frozenset(page_out), frozenset(keep))
        )
        stored |= page_out
        kept, paged_in = keep, next_in
    return Schedule(tuple(stages), "poet-plain")


def milp_values(problem: ScheduleProblem, poet: Poet, schedule: Schedule) -> list[float]:
    """An mcugen schedule as values of POET-plain's variables, the inverse of poet_schedule: a
    solution of the MILP when POET's space holds the schedule (each page-out of a value kept from
    the stage before, each page-in at least two stages after its page-out)."""
    nodes = problem.nodes
    n = len(nodes)
    x = [0.0] * len(poet.milp.lower)
    stages = schedule.stages
    stored: set[int] = set()
    for t, stage in enumerate(stages):
        for i in stored:
            x[poet.s_ssd[t][i]] = 1
        for k in stage.compute:
            x[poet.r[t][k]] = 1
        for i in stage.page_out:
            x[poet.m_out[t][i]] = 1
        if t + 1 < n:
            for i in stage.keep | stages[t + 1].page_in:
                x[poet.s_ram[t + 1][i]] = 1
            for i in stages[t + 1].page_in:
                x[poet.m_in[t][i]] = 1
        stored |= stage.page_out
    by_reader: list[list[int]] = [[] for _ in range(n)]
    for e, (_, k) in enumerate(poet.edges):
        by_reader[k].append(e)
    for t in range(n):
        for e, (i, k) in enumerate(poet.edges):
            kept = x[poet.s_ram[t + 1][i]] if t + 1 < n else float(nodes[i].output)
            later = sum(x[poet.r[t][j]] for j in problem.consumers[i] if j > k)
            x[poet.free[t][e]] = float(x[poet.r[t][k]] == 1 and not kept and not later)
        memory = nodes[0].size * x[poet.r[t][0]]
        memory += sum(nodes[i].size * x[poet.s_ram[t][i]] for i in range(n))
        x[poet.u[t][0]] = memory
        for k in range(n - 1):
            memory += nodes[k + 1].size * x[poet.r[t][k + 1]]
            memory -= sum(nodes[poet.edges[e][0]].size * x[poet.free[t][e]] for e in by_reader[k])
            x[poet.u[t][k + 1]] = memory
    return x


def solves(milp: Milp, x: list[float], tolerance: float = 1e-6) -> bool:
    """x is within every bound and row of the MILP."""
    for value, lower, upper in zip(x, milp.lower, milp.upper, strict=True):
        if not lower - tolerance <= value <= upper + tolerance:
            return False
    for coefficients, lower, upper in milp.rows:
        total = sum(x[col] * c for col, c in coefficients.items())
        if not lower - tolerance <= total <= upper + tolerance:
            return False
    return True


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
