"""The exact schedule: POET's decision space as a CP-SAT model (program.py's semantics).

Per stage t and node i <= t, booleans: R (computed in stage t; R[t][t] = 1), S (in RAM at the
stage's start), D (in slow storage), I (paged in at the start), O (paged out in the stage), and
per input edge (i, k) F (i leaves RAM after k runs); an integer U[t][k], the memory while k runs:
  R[t][k] => R[t][i] or S[t][i] or I[t][i] for each input i of k   (inputs resident)
  S[t+1][i] <= S[t][i] + R[t][i] + I[t][i];  D[t+1][i] <= D[t][i] + O[t][i];  I <= D;  O <= S + R
  R[t][i] + S[t][i] + I[t][i] <= 1                                 (one copy in RAM)
  F[t][(i,k)] => R[t][k], not S[t+1][i], not R[t][j] for later readers j of i in the stage
  U[t][first] = sizes of S and I (and of the first node when R);  U[t][k] = U[t][k-1]
    + size_k R[t][k] - sum of size_i F[t][(i, k-1)];  U[t][k] <= RAM budget
  sum of times <= time budget;  minimise the sum of costs.
F is only allowed, not forced: a schedule that frees later is never cheaper, so the optimum is
the same, and program.py frees at the earliest point. The structure cuts the model: R, S, I and D
exist only for nodes that may be recomputed, or are read at or after stage t; nodes with nothing to
page have no D, I, O. The warm start is the store-all schedule when it fits. Search effort is in
CP-SAT's deterministic time (`work`), so a schedule is the same on every machine. Weakness:
O(stages x nodes) booleans; graphs of a few hundred nodes need the reductions to stay small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcugen.plan.solver import solve
from mcugen.train.schedule.baselines import last_readers
from mcugen.train.schedule.bound import lower_bound

if TYPE_CHECKING:  # OR-Tools is imported when a schedule is searched (0.9 s at start-up)
    from ortools.sat.python import cp_model
from mcugen.train.schedule.problem import ScheduleError, ScheduleProblem
from mcugen.train.schedule.program import Schedule, Stage

#: Seconds after which a solve stops whatever its work (a safety net; the schedule says so, since
#: it then depends on the machine's speed).
SAFETY_SECONDS = 120.0


#: CP-SAT subsolvers, interleaved in one thread (deterministic): LNS around the start finds the
#: improvements a single search does not.
WORKERS = 4

#: Subsolvers left out: those solving the linear relaxation at every node spend 3 to 20 wall
#: seconds per unit of deterministic work on these models (the others about 1); without them the
#: same proofs on KWS and IC trained whole at half their peak take 7 and 10 s instead of 16 and 25
IGNORED = ("max_lp", "max_lp_sym", "reduced_costs", "pseudo_costs", "default_lp", "quick_restart")


@dataclass(frozen=True)
class Options:
    ram_budget: int | None = None
    time_budget: int | None = None
    remat: bool = True
    paging: bool = True
    work: float = 10.0  # CP-SAT deterministic time units
    hint: Schedule | None = None
    floor: int | None = None  # a known lower bound on the cost (bound.py's)
    gap: float = 0.0  # stop within this fraction of the cost from the proven bound


@dataclass
class _Vars:
    r: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    s: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    d: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    i: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    o: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    f: dict[tuple[int, int, int], cp_model.IntVar] = field(default_factory=dict)


def plan_cpsat(problem: ScheduleProblem, options: Options, name: str = "cpsat") -> Schedule:
    """The least-cost schedule within the budgets (or the best found in `work`, with CP-SAT's
    bound); ScheduleError when none exists or none is found."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    v = _variables(model, problem, options)
    _flow(model, problem, v)
    costs, times = _totals(problem, v)
    if options.ram_budget is not None:
        _memory(model, problem, v, options.ram_budget)
    if options.time_budget is not None:
        model.add(sum(times) <= options.time_budget)
    floor = options.floor if options.floor is not None else lower_bound(problem, options.ram_budget)
    if floor is not None:
        model.add(
            sum(costs) >= floor
        )  # every schedule costs that much: CP-SAT's bound starts there
    model.minimize(sum(costs))
    if options.hint is not None:
        _hint(model, problem, v, options.hint)
    solver = cp_model.CpSolver()
    solver.parameters.max_deterministic_time = options.work
    solver.parameters.max_time_in_seconds = SAFETY_SECONDS
    solver.parameters.num_workers = WORKERS
    solver.parameters.interleave_search = WORKERS > 1  # deterministic with several subsolvers
    for subsolver in IGNORED:
        solver.parameters.ignore_subsolvers.append(subsolver)
    solver.parameters.find_big_linear_overlap = False  # presolve passes that found nothing here
    solver.parameters.random_seed = 0
    # one presolve round: the later ones take a second or two and find little on these models
    # (VWW's last ten at half their peak: 6 s instead of 9 to the same proven optimum)
    solver.parameters.max_presolve_iterations = 1
    solver.parameters.relative_gap_limit = options.gap
    status = solve(solver, model)
    late = solver.wall_time >= SAFETY_SECONDS
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        what = "no schedule exists" if status == cp_model.INFEASIBLE else "no schedule found"
        least, node = least_ram(problem)
        raise ScheduleError(
            f"{what} within a RAM budget of {options.ram_budget} bytes"
            + (f" and {options.time_budget} cycles" if options.time_budget is not None else "")
            + f" ({node} alone needs {least} bytes with its inputs)",
            hint="raise --ram-budget or --runtime-budget",
        )
    bound = max(math.ceil(solver.best_objective_bound - 1e-6), floor or 0)
    return Schedule(
        _stages(problem, v, solver),
        name,
        lower_bound=bound,
        # CP-SAT says OPTIMAL at the gap limit too: optimal only when the bound meets the cost
        optimal=status == cp_model.OPTIMAL and round(solver.objective_value) <= bound,
        note=f"stopped after {SAFETY_SECONDS:g} s, before its work budget" if late else "",
    )


def least_ram(problem: ScheduleProblem) -> tuple[int, str]:
    """(bytes, node name): the largest node with its inputs, which every schedule holds at once."""
    nodes = problem.nodes
    need = [(n.size + sum(nodes[i].size for i in set(n.inputs)), n.name) for n in nodes]
    return max(need, key=lambda x: x[0], default=(0, ""))


def booleans(problem: ScheduleProblem, *, remat: bool, paging: bool) -> int:
    """How many booleans the exact model of the problem has (R, S, D, I, O; not F): the size
    that decides whether it is worth building."""
    n = len(problem.nodes)
    horizon = _reaches(problem) if remat else last_readers(problem)
    paging = paging and problem.paging
    count = 0
    for i, node in enumerate(problem.nodes):
        stages = range(i + 1, min(horizon[i], n - 1) + 1)
        count += len(stages)  # S
        if remat:
            count += sum(1 for t in stages if problem.may_recompute(i, t))
        if paging and node.size > 0:
            count += 3 * len(stages)  # D, I, O
    return count


def _variables(model: cp_model.CpModel, problem: ScheduleProblem, options: Options) -> _Vars:
    n = len(problem.nodes)
    # A value matters in stage t when a node run at or after t reads it or, with recomputation,
    # descends from it (a recomputation reads it); only then does it have a variable there.
    horizon = _reaches(problem) if options.remat else last_readers(problem)
    paging = options.paging and problem.paging
    v = _Vars()
    for t in range(n):
        v.r[t, t] = model.new_constant(1)
        for i in range(t):
            live = horizon[i] >= t
            if options.remat and live and problem.may_recompute(i, t):
                v.r[t, i] = model.new_bool_var(f"r{t}_{i}")
            if live:
                v.s[t, i] = model.new_bool_var(f"s{t}_{i}")
                if paging and problem.nodes[i].size > 0:
                    v.d[t, i] = model.new_bool_var(f"d{t}_{i}")
                    v.i[t, i] = model.new_bool_var(f"i{t}_{i}")
        if paging:
            for i in range(t + 1):
                if problem.nodes[i].size > 0 and horizon[i] > t:
                    v.o[t, i] = model.new_bool_var(f"o{t}_{i}")
    return v


def _reaches(problem: ScheduleProblem) -> list[int]:
    """Per node, the latest stage that reads it or any node computed from it."""
    n = len(problem.nodes)
    latest = [n if node.output else -1 for node in problem.nodes]
    for i in reversed(range(n)):
        for j in problem.consumers[i]:
            latest[i] = max(latest[i], j, latest[j])
    return latest


def _flow(model: cp_model.CpModel, problem: ScheduleProblem, v: _Vars) -> None:
    n = len(problem.nodes)
    zero = model.new_constant(0)
    for t in range(n):
        for k in range(t + 1):
            rk = v.r.get((t, k))
            if rk is None:
                continue
            for i in set(problem.nodes[k].inputs):
                sources = [
                    x for x in (v.r.get((t, i)), v.s.get((t, i)), v.i.get((t, i))) if x is not None
                ]
                model.add_bool_or(sources or [zero]).only_enforce_if(rk)
        for i in range(t):
            here = [x for x in (v.r.get((t, i)), v.s.get((t, i)), v.i.get((t, i))) if x is not None]
            if len(here) > 1:
                model.add(sum(here) <= 1)
            if (t, i) in v.i:
                model.add_implication(v.i[t, i], v.d[t, i])
        for i in range(t + 1):
            held = [x for x in (v.r.get((t, i)), v.s.get((t, i))) if x is not None]
            nxt = v.s.get((t + 1, i))
            if nxt is not None:
                model.add(nxt <= sum(held + [x for x in (v.i.get((t, i)),) if x is not None]))
            if (t, i) in v.o:
                model.add(v.o[t, i] <= sum(held))
            stored = v.d.get((t + 1, i))
            if stored is not None:
                before = [x for x in (v.d.get((t, i)), v.o.get((t, i))) if x is not None]
                model.add(stored <= sum(before))
    for i, node in enumerate(problem.nodes):
        if node.output:  # in RAM after the last stage
            t = n - 1
            here = [x for x in (v.r.get((t, i)), v.s.get((t, i)), v.i.get((t, i))) if x is not None]
            model.add_bool_or(here or [zero])


def _totals(problem: ScheduleProblem, v: _Vars) -> tuple[list[cp_model.LinearExpr], list]:
    costs: list = []
    times: list = []
    for (_, i), x in v.r.items():
        costs.append(problem.nodes[i].cost * x)
        times.append(problem.nodes[i].time * x)
    for (_, i), x in v.i.items():
        c, s = problem.in_cost(i)
        costs.append(c * x)
        times.append(s * x)
    for (_, i), x in v.o.items():
        c, s = problem.out_cost(i)
        costs.append(c * x)
        times.append(s * x)
    return costs, times


def _memory(model: cp_model.CpModel, problem: ScheduleProblem, v: _Vars, budget: int) -> None:
    n = len(problem.nodes)
    nodes = problem.nodes
    # sizes and budget in units of their common divisor (16 for arena buffers): the same
    # constraints, with coefficients CP-SAT's linear reasoning handles far better
    unit = math.gcd(*(node.size for node in nodes)) or 1
    size = [node.size // unit for node in nodes]
    budget //= unit
    for t in range(n):
        present = [size[i] * x for (tt, i), x in v.s.items() if tt == t]
        present += [size[i] * x for (tt, i), x in v.i.items() if tt == t]
        run = [k for k in range(t + 1) if (t, k) in v.r]
        usage = sum(present)
        freed: list = []
        for pos, k in enumerate(run):
            usage = usage + size[k] * v.r[t, k] - sum(freed)
            model.add(usage <= budget)
            freed = []
            later = run[pos + 1 :]
            for i in sorted(set(nodes[k].inputs)):
                if nodes[i].size == 0:
                    continue
                f = v.f[t, i, k] = model.new_bool_var(f"f{t}_{i}_{k}")
                model.add_implication(f, v.r[t, k])
                keep = v.s.get((t + 1, i))
                if keep is not None:
                    model.add_implication(f, keep.negated())
                elif t == n - 1 and nodes[i].output:
                    model.add(f == 0)
                for j in later:
                    if i in nodes[j].inputs:
                        model.add_implication(f, v.r[t, j].negated())
                freed.append(size[i] * f)


def _hint(model: cp_model.CpModel, problem: ScheduleProblem, v: _Vars, hint: Schedule) -> None:
    for t, stage in enumerate(hint.stages):
        kept = hint.stages[t - 1].keep if t > 0 else frozenset()
        stored: set[int] = set()
        for s in hint.stages[:t]:
            stored |= s.page_out
        for (tt, i), x in v.r.items():
            if tt == t and i != t:
                model.add_hint(x, i in stage.compute)
        for (tt, i), x in v.s.items():
            if tt == t:
                model.add_hint(x, i in kept)
        for (tt, i), x in v.d.items():
            if tt == t:
                model.add_hint(x, i in stored)
        for (tt, i), x in v.i.items():
            if tt == t:
                model.add_hint(x, i in stage.page_in)
        for (tt, i), x in v.o.items():
            if tt == t:
                model.add_hint(x, i in stage.page_out)
        for k, freed in _frees(problem, stage).items():
            for i in problem.nodes[k].inputs:
                if (t, i, k) in v.f:
                    model.add_hint(v.f[t, i, k], i in freed)


def _frees(problem: ScheduleProblem, stage: Stage) -> dict[int, set[int]]:
    """Per node the stage computes, the inputs that leave RAM after it (program.py's rule)."""
    frees = {}
    for pos, k in enumerate(stage.compute):
        later = {i for j in stage.compute[pos + 1 :] for i in problem.nodes[j].inputs}
        frees[k] = set(problem.nodes[k].inputs) - later - stage.keep
    return frees


def _stages(problem: ScheduleProblem, v: _Vars, solver: cp_model.CpSolver) -> tuple[Stage, ...]:
    n = len(problem.nodes)
    stages = []
    for t in range(n):
        compute = tuple(k for k in range(t + 1) if (t, k) in v.r and solver.value(v.r[t, k]))
        page_in = frozenset(i for (tt, i), x in v.i.items() if tt == t and solver.value(x))
        page_out = frozenset(i for (tt, i), x in v.o.items() if tt == t and solver.value(x))
        if t + 1 < n:
            keep = frozenset(i for (tt, i), x in v.s.items() if tt == t + 1 and solver.value(x))
        else:
            keep = frozenset(i for i, node in enumerate(problem.nodes) if node.output)
        stages.append(Stage(compute, page_in, page_out, keep))
    return tuple(stages)
