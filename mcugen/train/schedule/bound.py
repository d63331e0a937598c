"""A lower bound on any schedule's cost, independent of the solver (the house's rule: every plan
says how far from optimal it is).

Every node runs at least once: the sum of node costs. Besides, at each stage t the values needed
after t (read by a later stage, or outputs) that node t does not touch must leave RAM, as many
bytes as the live total exceeds the budget, and each value leaving costs at least its cheapest way
back: a page-out and page-in, or running it again (at least its own cost; never for a value that
cannot be recomputed). The cheapest way to free that many bytes is at least the fractional
knapsack's (values sorted by cost per byte), and one eviction may serve many stages, so the bound
adds the largest stage's, not their sum. O(stages x nodes log nodes)."""

from __future__ import annotations

from mcugen.train.schedule.baselines import last_readers
from mcugen.train.schedule.problem import ScheduleProblem


def lower_bound(problem: ScheduleProblem, ram_budget: int | None) -> int | None:
    """The bound, or None when some stage cannot be brought under the budget at any price."""
    nodes = problem.nodes
    base = sum(node.cost for node in nodes)
    if ram_budget is None:
        return base
    last = last_readers(problem)  # an output: past the last stage
    n = len(nodes)
    worst = 0
    for t in range(n):
        touched = set(nodes[t].inputs) | {t}
        live = [i for i in range(t) if last[i] > t and i not in touched]
        resident = sum(nodes[i].size for i in touched) + sum(nodes[i].size for i in live)
        excess = resident - ram_budget
        if excess <= 0:
            continue
        if sum(nodes[i].size for i in touched) > ram_budget:
            return None
        price = _eviction_price(problem, live, excess, t)
        if price is None:
            return None
        worst = max(worst, price)
    return base + worst


def _eviction_price(problem: ScheduleProblem, live: list[int], excess: int, t: int) -> int | None:
    """The fractional knapsack's cost of freeing `excess` bytes of `live` at stage t."""
    options = []
    for i in live:
        node = problem.nodes[i]
        if node.size == 0:
            continue
        ways = []
        if problem.paging:
            ways.append(problem.out_cost(i)[0] + problem.in_cost(i)[0])
        if any(problem.may_recompute(i, s) for s in range(t + 1, len(problem.nodes) + 1)):
            ways.append(node.cost)
        if ways:
            options.append((min(ways) / node.size, node.size))
    options.sort()
    total = 0.0
    for per_byte, size in options:
        take = min(size, excess)
        total += per_byte * take
        excess -= take
        if excess <= 0:
            return int(total)  # floor: a bound may only be lower
    return None
