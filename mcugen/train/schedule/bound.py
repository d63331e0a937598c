"""A lower bound on any schedule's cost, independent of the schedulers (the house's rule: every
plan says how far from optimal it is).

Every node runs at least once: the sum of node costs. Besides, at each stage t the values needed
after t (read by a later stage, or outputs) that node t does not touch must leave RAM, as many
bytes as the live total exceeds the budget (the stage's excess), and each value that leaves RAM
costs at least its cheapest way back: a page-out and a page-in, or running it again (its own cost;
only while it may still be recomputed). A value evicted once may serve every stage it is live
across, so the least total is a covering problem: choose values (and how each comes back) whose
bytes cover every stage's excess, at the least price. Its optimum, or any bound on it, bounds every
schedule: a schedule pays at least that price for the values it evicts, and those cover every
stage. The covering problem is solved exactly by CP-SAT (values x stages; a few hundred of each at
most, milliseconds to a second); when its work runs out, its proven bound stands in, and the
fractional knapsack of the worst stage (the bound's first version) is the floor of both.
O(stages x nodes) to build."""

from __future__ import annotations

import math

from ortools.sat.python import cp_model

from mcugen.train.schedule.baselines import last_readers
from mcugen.train.schedule.problem import ScheduleProblem

#: CP-SAT deterministic work for the covering problem's integer bound
WORK = 0.5


def lower_bound(problem: ScheduleProblem, ram_budget: int | None) -> int | None:
    """The bound, or None when some stage cannot be brought under the budget at any price."""
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
    return base + max(worst, _covering(problem, stages))


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


def _ways(problem: ScheduleProblem, i: int, t: int) -> tuple[int | None, int | None]:
    """(page-out and page-in price, recomputation price) of node i's value evicted at stage t;
    None for a way that does not exist."""
    page = None
    if problem.paging:
        page = problem.out_cost(i)[0] + problem.in_cost(i)[0]
    n = len(problem.nodes)
    later = problem.nodes[i].recomputable and any(
        problem.may_recompute(i, s) for s in range(t + 1, n)
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


def _covering(problem: ScheduleProblem, stages: list[tuple[int, int, list[int]]]) -> int:
    """A bound on the covering problem's optimum: the better of its linear relaxation's optimum
    (GLOP) and CP-SAT's proven bound on its integer optimum within `WORK` (the optimum itself on
    small graphs).

    Per value i, a boolean per way back (paged, recomputed: each paid once when used at all) and
    per stage t over the budget, whether i is away by that way there; the bytes away cover the
    stage's excess. Recomputing i needs its inputs: an input j that is not live at t (no original
    reader after it) and that node t does not touch is then either in RAM at t, where it takes
    its bytes from the ones freed (h[j, t]), or brought back after t at its least price (z[j],
    paid once however many values it serves). Any schedule gives a solution of this problem at
    most its cost over running every node once: its evictions at each stage, the ways it brings
    each value back, its inputs in RAM at each stage, and the inputs it brings back."""
    prices, rows = _covering_rows(problem, stages)
    return max(_relaxed(prices, rows), _integer(prices, rows))


#: A row: (terms (variable, coefficient), lower bound); every variable is 0/1.
Row = tuple[list[tuple[int, int]], int]


def _covering_rows(
    problem: ScheduleProblem, stages: list[tuple[int, int, list[int]]]
) -> tuple[list[int], list[Row]]:
    """The covering problem: per variable its price, and rows sum >= lower."""
    nodes = problem.nodes
    unit = math.gcd(*(node.size for node in nodes)) or 1
    prices: list[int] = []
    rows: list[Row] = []
    way: dict[tuple[int, str], int] = {}
    held: dict[tuple[int, int], int] = {}
    back: dict[int, int] = {}

    def var(price: int = 0) -> int:
        prices.append(price)
        return len(prices) - 1

    for t, excess, live in stages:
        around = set(live) | set(nodes[t].inputs) | {t}
        cover: list[tuple[int, int]] = []
        for i in live:
            by_page, by_remat = _ways(problem, i, t)
            away = []
            for kind, price in (("p", by_page), ("r", by_remat)):
                if price is None:
                    continue
                away.append(x := var())
                if (i, kind) not in way:
                    way[i, kind] = var(price)
                rows.append(([(way[i, kind], 1), (x, -1)], 0))  # paid when used
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


def _integer(prices: list[int], rows: list[Row]) -> int:
    """CP-SAT's proven bound on the integer optimum within WORK (deterministic)."""
    model = cp_model.CpModel()
    xs = [model.new_bool_var("") for _ in prices]
    for terms, lower in rows:
        model.add(sum(k * xs[x] for x, k in terms) >= lower)
    model.minimize(sum(price * x for price, x in zip(prices, xs, strict=True) if price))
    solver = cp_model.CpSolver()
    solver.parameters.max_deterministic_time = WORK
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    status = solver.solve(model)
    if status == cp_model.INFEASIBLE:
        return 0
    return max(0, math.floor(solver.best_objective_bound + 1e-6))
