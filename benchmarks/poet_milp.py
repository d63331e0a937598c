"""POET's plain MILP for a training `ScheduleProblem`, solved by CBC and HiGHS, and its solutions
mapped to and from mcugen schedules (benchmarks/schedule_solvers.py prints the comparison).

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
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mcugen.train.schedule import (
    Schedule,
    ScheduleProblem,
    Stage,
)
from mcugen.train.schedule.bound import silent_highs

INF = float("inf")


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
