"""Exact partitioning with OR-Tools CP-SAT: operators on boards and their schedule, minimising
the modelled latency (partition.py's model), warm-started from the best heuristic.

Model (times in whole microseconds, every duration rounded down, so the solver's bound is a
bound of the real-valued model: floor(a + b) >= floor(a) + floor(b) keeps every schedule
feasible):
- x[i, p]: operator i on board p (one each; none where its inputs and outputs alone exceed the
  board's RAM); an optional interval per (i, p), no overlap per board.
- For each tensor t and board q: need[t, q] when a reader of t is on q; for each other board p,
  y[t, p, q] >= x[producer, p] + need[t, q] - 1, an optional transfer interval on link (p, q)
  after the producer ends, before each reader on q starts; no overlap per link. Model inputs
  need no transfer (the host loads them before the clock); outputs go to the host over their
  board's host link. The latency is the last operator or output arrival.
- Flash: each board's weights within its flash, a constant counted at its first reader only (a
  relaxation where two operators share one, so the bound stays a bound).
RAM is modelled only by the per-operator floor: the found assignment is checked exactly
(partition.py); when a board overflows, the set of operators on it is forbidden together and the
model solved again (`RAM_ROUNDS` times at most, so the work is at most twice the budget); the
warm start is kept when no answer fits, which the note says.
Deterministic: a fixed seed, `WORKERS` subsolvers interleaved in one thread, the budget in
CP-SAT's deterministic time. Weakness: the model grows as tensors x boards^2 transfer intervals.
"""

from __future__ import annotations

import math
from typing import Any

from mcugen.plan.partition.branch import branch
from mcugen.plan.partition.partition import Partition, board_arena, misfit, oversized
from mcugen.plan.partition.pipeline import pipeline
from mcugen.plan.partition.problem import HOST, UNSPLITTABLE, PartitionDoesNotFit, PartitionProblem
from mcugen.plan.solver import solve

#: Deterministic work units (CP-SAT deterministic time) when the caller gives no budget.
DEFAULT_WORK = 1.0
WORKERS = 4
SEED = 0
SAFETY_SECONDS = 120.0
#: Re-solves, each with a quarter of the budget, after an answer that overflows a board's RAM:
#: each forbids that board's operators together on any board with no more RAM (a cut that is no
#: bound: the first solve's is).
RAM_ROUNDS = 4
US = 1e6  # model time unit: microseconds


def _heuristics(problem: PartitionProblem) -> Partition | None:
    """The lowest-latency partition of the heuristics that fit (ties: fewer link bytes, then
    registration order)."""
    from mcugen.plan.partition import single

    found = []
    for k, strategy in enumerate((single, branch, pipeline)):
        try:
            part = strategy(problem)
        except PartitionDoesNotFit:
            continue
        found.append((part.latency, part.board_bytes, k, part))
    return min(found, key=lambda f: f[:3])[3] if found else None


def cpsat(problem: PartitionProblem, *, budget: float | None = None) -> Partition:
    """The best partition found within `budget` work units (module docstring)."""
    start = _heuristics(problem)
    work = DEFAULT_WORK if budget is None else budget
    if work <= 0 or problem.n_boards < 2 or not problem.ops:
        if start is None:
            raise _no_fit(problem)
        return Partition.of("cpsat", problem, start.assignment, start.order, note="heuristic kept")
    found, bound, optimal = _solve(problem, start, work)
    bound_s = bound / US
    best = (
        found if found is not None and (start is None or found.latency < start.latency) else start
    )
    if best is None:
        raise _no_fit(problem)
    # Durations are whole microseconds rounded down: each operator and transfer may lose one.
    slack = (len(problem.ops) + len(best.schedule.transfers) + 1) / US
    proven = optimal and best.latency <= bound_s + slack
    kept = "" if best is found else f"{best.strategy} kept, "
    if found is None and optimal and not proven:
        kept = f"{best.strategy} kept (the solver's answer did not fit RAM), "
    note = kept + ("proven optimal" if proven else f"gap {_gap(best.latency, bound_s)}")
    return Partition.of(
        "cpsat",
        problem,
        best.assignment,
        best.order,
        bound=bound_s,
        note=note,
        proven_optimal=proven,
    )


def _gap(latency: float, bound: float) -> str:
    return f"{(latency - bound) / latency:.1%}" if latency > 0 else "0%"


def _no_fit(problem: PartitionProblem) -> PartitionDoesNotFit:
    names = ", ".join(b.name for b in problem.boards)
    why = oversized(problem)
    return PartitionDoesNotFit(
        f"no partition over {names} fits their RAM and flash" + (f": {why}" if why else ""),
        hint=UNSPLITTABLE if why else "add boards, or boards with more RAM",
    )


def _solve(
    problem: PartitionProblem, start: Partition | None, work: float
) -> tuple[Partition | None, int, bool]:
    """(the solver's partition when it fits, else None; its bound in microseconds; optimal)."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x, s, e, makespan = _build(m, problem)
    if start is not None:
        m.add(makespan <= math.ceil(start.latency * US))
        for op in problem.ops:
            for p in range(problem.n_boards):
                m.add_hint(x[op.index][p], start.assignment[op.index] == p)
            m.add_hint(s[op.index], math.floor(start.schedule.starts[op.index] * US))
    m.minimize(makespan)
    found: Partition | None = None
    bound, optimal = 0, False
    for attempt in range(RAM_ROUNDS + 1):
        status, solver = _run(m, work if attempt == 0 else work / RAM_ROUNDS)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            if attempt == 0 and status != cp_model.INFEASIBLE:
                bound = max(int(solver.best_objective_bound), 0)
            break
        if attempt == 0:  # later rounds carry cuts that are not valid bounds
            bound = math.floor(solver.best_objective_bound + 1e-6)
            optimal = status == cp_model.OPTIMAL
        assignment = [
            next(p for p in range(problem.n_boards) if solver.value(x[op.index][p]))
            for op in problem.ops
        ]
        order = sorted(range(len(problem.ops)), key=lambda i: (solver.value(s[i]), i))
        if not misfit(problem, assignment, order):
            found = Partition.of("cpsat", problem, assignment, order)
            break
        for k, board in enumerate(problem.boards):  # not these operators together on board k
            if board_arena(problem, assignment, order, k) > board.ram:
                ops = [i for i in range(len(problem.ops)) if assignment[i] == k]
                for j, other in enumerate(problem.boards):  # nor on a board with less RAM
                    if other.ram <= board.ram:
                        m.add(sum(x[i][j] for i in ops) <= len(ops) - 1)
    return found, bound, optimal


def _run(m: Any, work: float) -> tuple[Any, Any]:
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = WORKERS
    solver.parameters.interleave_search = True
    solver.parameters.random_seed = SEED
    solver.parameters.max_deterministic_time = work
    solver.parameters.max_time_in_seconds = SAFETY_SECONDS
    return solve(solver, m), solver


def _build(m: Any, problem: PartitionProblem) -> tuple[list[list[Any]], list[Any], list[Any], Any]:
    """The variables and constraints of the module docstring."""
    n, boards = len(problem.ops), range(problem.n_boards)
    horizon = sum(math.floor(max(op.seconds) * US) for op in problem.ops)
    horizon += sum(math.floor(problem.transfer_seconds(t) * US) for t in problem.tensor_bytes) * (
        problem.n_boards
    )
    x = [[m.new_bool_var(f"x{i}_{p}") for p in boards] for i in range(n)]
    s = [m.new_int_var(0, horizon, f"s{i}") for i in range(n)]
    e = [m.new_int_var(0, horizon, f"e{i}") for i in range(n)]
    makespan = m.new_int_var(0, horizon, "latency")
    on_board: list[list[Any]] = [[] for _ in boards]
    first_reader: dict[int, int] = {}
    for op in problem.ops:
        i = op.index
        m.add_exactly_one(x[i])
        for p in boards:
            if problem.working_set(op) > problem.boards[p].ram:
                m.add(x[i][p] == 0)
            d = math.floor(op.seconds[p] * US)
            on_board[p].append(m.new_optional_interval_var(s[i], d, e[i], x[i][p], f"o{i}_{p}"))
        m.add(makespan >= e[i])
        for t in op.weights:
            first_reader.setdefault(t, i)
    for p in boards:
        m.add_no_overlap(on_board[p])
        weights = [
            problem.weight_bytes[t] * x[i][p]
            for t, i in first_reader.items()
            if problem.weight_bytes[t]
        ]
        if weights:
            m.add(sum(weights) <= problem.boards[p].flash)
    _links(m, problem, x, s, e, makespan, horizon)
    return x, s, e, makespan


def _links(
    m: Any,
    problem: PartitionProblem,
    x: list[list[Any]],
    s: list[Any],
    e: list[Any],
    makespan: Any,
    horizon: int,
) -> None:
    """Transfers: intervals on each directed link, readers after arrival, outputs to the host."""
    producer, consumers = problem.producer(), problem.consumers()
    boards = range(problem.n_boards)
    on_link: dict[tuple[int, int], list[Any]] = {}
    for t in sorted(problem.tensor_bytes):
        d = math.floor(problem.transfer_seconds(t) * US)
        j = producer.get(t)
        if j is None:  # a model input: loaded on every board that reads it before the clock
            continue
        for c in consumers.get(t, []):
            m.add(s[c] >= e[j])
        for q in boards:
            readers = [c for c in consumers.get(t, []) if c != j]
            if not readers:
                continue
            need = m.new_bool_var(f"need{t}_{q}")
            for c in readers:
                m.add_implication(x[c][q], need)
            for p in boards:
                if p == q:
                    continue
                y = m.new_bool_var(f"y{t}_{p}_{q}")
                m.add_bool_or([x[j][p].Not(), need.Not(), y])
                a = m.new_int_var(0, horizon, f"a{t}_{p}_{q}")
                b = m.new_int_var(0, horizon, f"b{t}_{p}_{q}")
                on_link.setdefault((p, q), []).append(
                    m.new_optional_interval_var(a, d, b, y, f"l{t}_{p}_{q}")
                )
                m.add(a >= e[j]).only_enforce_if(y)
                for c in readers:
                    m.add(s[c] >= b).only_enforce_if([y, x[c][q]])
        if t in problem.outputs:
            for p in boards:
                a = m.new_int_var(0, horizon, f"h{t}_{p}")
                on_link.setdefault((p, HOST), []).append(
                    m.new_optional_interval_var(a, d, a + d, x[j][p], f"hl{t}_{p}")
                )
                m.add(a >= e[j]).only_enforce_if(x[j][p])
                m.add(makespan >= a + d).only_enforce_if(x[j][p])
    for intervals in on_link.values():
        m.add_no_overlap(intervals)
