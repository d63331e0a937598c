"""A lower bound on any schedule's cost, independent of the schedulers (the house's rule: every
plan says how far from optimal it is).

Every node runs at least once: the sum of node costs. Besides, at each stage t the values needed
after t (read by a later stage, or outputs) that node t does not touch must leave RAM, as many
bytes as the live total exceeds the budget (the stage's excess), and each value that leaves RAM
costs at least its cheapest way back before its next reader: a page-in (and one page-out for the
value's life), or running it again (its own cost; only while it may still be recomputed). A value
evicted once may serve every stage between two of its readers, so the least total is a covering
problem: choose values (and how each comes back) whose bytes cover every stage's excess, at the
least price. Its optimum, or any bound on it, bounds every schedule: a schedule pays at least
that price for the values it evicts, and those cover every stage. HiGHS solves the covering
problem (values x stages; a few thousand booleans, under a second to two), mostly at its root;
when its nodes run out, its proven bound stands in, and the fractional knapsack of the worst stage
(the bound's first version) is the floor of both. O(stages x nodes) to build.

Weakness: the memory a recomputation itself needs is not counted (its inputs in RAM in the stage
that recomputes it, when they are live across the stages it was away), so on VWW trained whole at
half its peak the bound stays some 0.9 % under the best schedule found."""

from __future__ import annotations

import bisect
import functools
import math
import os
import sys
from typing import Any, Literal

from mcugen.train.schedule.baselines import last_readers
from mcugen.train.schedule.problem import ScheduleProblem

#: Branch-and-bound nodes for the covering problem's integer bound (HiGHS, deterministic)
NODES = 200

#: The largest covering problem (variables) whose integer optimum is solved. HiGHS takes 0.5 to
#: 2 s on VWW trained whole (2,535 to 3,715), 5 to 60 s on MobileNetV2 trained whole or a chain of
#: 300 nodes (10,000 to 35,000), where the relaxation is within 20 of the integer optimum anyway.
INTEGER_SIZE = 5_000

#: Seconds after which HiGHS stops whatever its nodes (a safety net that then makes the bound
#: depend on the machine's speed; no problem here comes near it)
SAFETY_SECONDS = 60.0


#: How hard the bound tries: the worst stage's fractional knapsack (milliseconds), then the
#: covering problem's linear relaxation (up to 3 s on 300 nodes), then its integer optimum
Effort = Literal["knapsack", "relaxed", "integer"]
EFFORTS: tuple[Effort, ...] = ("knapsack", "relaxed", "integer")


def lower_bound(
    problem: ScheduleProblem, ram_budget: int | None, effort: Effort = "integer"
) -> int | None:
    """The bound, or None when some stage cannot be brought under the budget at any price. The
    integer optimum is solved only on covering problems of up to `INTEGER_SIZE` variables."""
    nodes = problem.nodes
    base = sum(node.cost for node in nodes)
    if ram_budget is None:
        return base
    stages = _excesses(problem, ram_budget)
    if stages is None:
        return None
    if not stages:
        return base
    worst = 0
    for t, excess, live in stages:
        price = _fractional(problem, live, excess, t)
        if price is None:
            return None
        worst = max(worst, price)
    if effort == "knapsack":
        return base + worst
    return base + max(worst, _covering(problem, ram_budget, effort == "integer"))


def _excesses(problem: ScheduleProblem, ram_budget: int) -> list[tuple[int, int, list[int]]] | None:
    """Per stage over the budget: (stage, excess bytes, the live values node t does not touch),
    or None when the values node t touches alone exceed it."""
    nodes = problem.nodes
    last = last_readers(problem)  # an output: past the last stage
    out = []
    live: set[int] = set()
    for t in range(len(nodes)):
        live = {i for i in live if last[i] > t}
        touched = set(nodes[t].inputs) | {t}
        others = sorted(i for i in live if i not in touched and nodes[i].size > 0)
        held = sum(nodes[i].size for i in touched)
        if held > ram_budget:
            return None
        excess = held + sum(nodes[i].size for i in others) - ram_budget
        if excess > 0:
            out.append((t, excess, others))
        if last[t] > t:
            live.add(t)
    return out


def _ways(
    problem: ScheduleProblem, i: int, t: int, until: int | None = None
) -> tuple[int | None, int | None]:
    """(page-out and page-in price, recomputation price) of node i's value evicted at stage t
    and back by stage `until` (default: the last); None for a way that does not exist."""
    page = None
    if problem.paging:
        page = problem.out_cost(i)[0] + problem.in_cost(i)[0]
    n = len(problem.nodes)
    end = n - 1 if until is None else until
    later = problem.nodes[i].recomputable and any(
        problem.may_recompute(i, s) for s in range(t + 1, end + 1)
    )
    return page, problem.nodes[i].cost if later else None


def _fractional(problem: ScheduleProblem, live: list[int], excess: int, t: int) -> int | None:
    """The fractional knapsack's cost of freeing `excess` bytes of `live` at stage t."""
    options = []
    for i in live:
        ways = [w for w in _ways(problem, i, t) if w is not None]
        if ways:
            options.append((min(ways) / problem.nodes[i].size, problem.nodes[i].size))
    options.sort()
    total = 0.0
    for per_byte, size in options:
        take = min(size, excess)
        total += per_byte * take
        excess -= take
        if excess <= 0:
            return int(total)  # floor: a bound may only be lower
    return None


@functools.lru_cache(maxsize=8)
def _covering(problem: ScheduleProblem, ram_budget: int, integer: bool) -> int:
    """A bound on the covering problem's optimum: the better of its linear relaxation's optimum
    (GLOP) and HiGHS's proven bound on its integer optimum within `NODES` (the optimum itself on
    every problem measured).

    Per value i, a boolean per way back and gap between two of its readers (paged in,
    recomputed: each paid once when used at all; a page-out once per value), and
    per stage t over the budget, whether i is away by that way there; the bytes away cover the
    stage's excess. Recomputing i needs its inputs: an input j that is not live at t (no original
    reader after it) and that node t does not touch is then either in RAM at t, where it takes
    its bytes from the ones freed (h[j, t]), or brought back after t at its least price (z[j],
    paid once however many values it serves). Any schedule gives a solution of this problem at
    most its cost over running every node once: its evictions at each stage, the ways it brings
    each value back, its inputs in RAM at each stage, and the inputs it brings back."""
    prices, rows = _covering_problem(problem, ram_budget)
    if not integer:
        return _relaxed(prices, rows)
    relaxed = _covering(problem, ram_budget, False)
    if len(prices) > INTEGER_SIZE:
        return relaxed
    return max(relaxed, _integer(prices, rows))


def small(problem: ScheduleProblem, ram_budget: int | None) -> bool:
    """Whether the bound's every step is quick (its covering problem has at most
    `INTEGER_SIZE` variables: its integer optimum is solved)."""
    if ram_budget is None or not _excesses(problem, ram_budget):
        return True
    return len(_covering_problem(problem, ram_budget)[0]) <= INTEGER_SIZE


@functools.lru_cache(maxsize=8)
def _covering_problem(problem: ScheduleProblem, ram_budget: int) -> tuple[list[int], list[Row]]:
    stages = _excesses(problem, ram_budget)
    assert stages is not None  # lower_bound's caller has checked
    return _covering_rows(problem, stages)


#: A row: (terms (variable, coefficient), lower bound); every variable is 0/1.
Row = tuple[list[tuple[int, int]], int]


def _covering_rows(
    problem: ScheduleProblem, stages: list[tuple[int, int, list[int]]]
) -> tuple[list[int], list[Row]]:
    """The covering problem: per variable its price, and rows sum >= lower.

    A value away at stages t1 < t2 with a reader r between them (t1 < r < t2) comes back twice:
    once in (t1, r], once after t2. So a way back is paid per gap between consecutive readers
    (a recomputation, or a page-in), and a page-out once per value (slow storage is written
    once)."""
    nodes = problem.nodes
    n = len(nodes)
    unit = math.gcd(*(node.size for node in nodes)) or 1
    readers = [
        list(users) + ([n] if node.output else [])
        for users, node in zip(problem.consumers, nodes, strict=True)
    ]
    prices: list[int] = []
    rows: list[Row] = []
    way: dict[tuple[int, str, int], int] = {}
    stored: dict[int, int] = {}
    held: dict[tuple[int, int], int] = {}
    back: dict[int, int] = {}

    def var(price: int = 0) -> int:
        prices.append(price)
        return len(prices) - 1

    for t, excess, live in stages:
        around = set(live) | set(nodes[t].inputs) | {t}
        cover: list[tuple[int, int]] = []
        for i in live:
            gap = bisect.bisect_right(readers[i], t)
            by_page, by_remat = _ways(problem, i, t, min(readers[i][gap], n - 1))
            away = []
            for kind, price in (("p", by_page), ("r", by_remat)):
                if price is None:
                    continue
                away.append(x := var())
                if (i, kind, gap) not in way:
                    if kind == "p":
                        way[i, kind, gap] = var(problem.in_cost(i)[0])
                        if i not in stored:
                            stored[i] = var(problem.out_cost(i)[0])
                        rows.append(([(stored[i], 1), (way[i, kind, gap], -1)], 0))
                    else:
                        way[i, kind, gap] = var(price)
                rows.append(([(way[i, kind, gap], 1), (x, -1)], 0))  # paid when used
            if by_remat is not None:
                x = away[-1]
                for j in sorted(set(nodes[i].inputs) - around):
                    if nodes[j].size == 0:
                        continue
                    if (j, t) not in held:
                        held[j, t] = var()
                        cover.append((held[j, t], -(nodes[j].size // unit)))
                    ways = [w for w in _ways(problem, j, t) if w is not None]
                    if ways and j not in back:
                        back[j] = var(min(ways))
                    options = [(held[j, t], 1)] + ([(back[j], 1)] if j in back else [])
                    rows.append((options + [(x, -1)], 0))
            if len(away) > 1:
                rows.append(([(x, -1) for x in away], -1))  # at most one way at a time
            cover += [(x, nodes[i].size // unit) for x in away]
        rows.append((cover, -(-excess // unit)))
    return prices, rows


def _relaxed(prices: list[int], rows: list[Row]) -> int:
    """The linear relaxation's optimum (GLOP), floored and shaved of its float tolerance."""
    from ortools.linear_solver import pywraplp

    lp = pywraplp.Solver.CreateSolver("GLOP")
    xs = [lp.NumVar(0.0, 1.0, "") for _ in prices]
    for terms, lower in rows:
        row = lp.RowConstraint(lower, lp.infinity(), "")
        for x, k in terms:
            row.SetCoefficient(xs[x], k)
    objective = lp.Objective()
    for x, price in zip(xs, prices, strict=True):
        objective.SetCoefficient(x, price)
    objective.SetMinimization()
    if lp.Solve() != lp.OPTIMAL:
        return 0  # the fractional knapsack stands (it has a price whenever this has one)
    return max(0, math.floor(objective.Value() * (1 - 1e-7) - 1e-3))


def silent_highs() -> Any:
    """A HiGHS instance, without the banner its constructor prints on the process's standard
    output (file descriptor 1, under Python's buffers) the first time."""
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            return highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _integer(prices: list[int], rows: list[Row]) -> int:
    """HiGHS's proven bound on the integer optimum (branch and bound on one thread, at most
    `NODES` nodes: the same bound on every machine; the root's cuts close most of the linear
    relaxation's gap on these problems, VWW trained whole at half its peak included)."""
    import highspy
    import numpy as np

    n = len(prices)
    h = silent_highs()
    for option, value in (
        ("output_flag", False),
        ("threads", 1),
        ("random_seed", 0),
        ("mip_max_nodes", NODES),
        # prices are integers: a gap under 1 is optimal (HiGHS stops at 0.01 % by default)
        ("mip_rel_gap", 0.0),
        ("mip_abs_gap", 0.99),
        ("time_limit", SAFETY_SECONDS),
    ):
        h.setOptionValue(option, value)
    h.addVars(n, np.zeros(n), np.ones(n))
    columns = np.arange(n, dtype=np.int32)
    h.changeColsCost(n, columns, np.array(prices, dtype=float))
    h.changeColsIntegrality(n, columns, np.full(n, highspy.HighsVarType.kInteger))
    starts = np.cumsum([0] + [len(terms) for terms, _ in rows[:-1]]).astype(np.int32)
    h.addRows(
        len(rows),
        np.array([lower for _, lower in rows], dtype=float),
        np.full(len(rows), highspy.kHighsInf),
        sum(len(terms) for terms, _ in rows),
        starts,
        np.array([x for terms, _ in rows for x, _ in terms], dtype=np.int32),
        np.array([k for terms, _ in rows for _, k in terms], dtype=float),
    )
    h.run()
    if h.getModelStatus() == highspy.HighsModelStatus.kInfeasible:
        return 0  # the fractional knapsack stands
    info = h.getInfo()
    if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
        # the optimum: an integer solution's cost, so a sum of integers up to float rounding
        return max(0, round(info.objective_function_value))
    bound = info.mip_dual_bound
    if not math.isfinite(bound):
        return 0
    # stopped early: round the proven bound up, after shaving HiGHS's tolerance
    return max(0, math.ceil(bound - 1e-6 * max(1.0, abs(bound))))
