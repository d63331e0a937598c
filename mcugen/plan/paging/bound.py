"""A lower bound on the cost of every paging schedule, independent of any solver.

At step s, at least E_s = live bytes - C bytes are not in fast memory. A buffer out of fast memory
somewhere in the gap between two of its uses pays, inside that gap, a copy in before its next use
or (when kernels may work in slow memory) a slow access at it, plus a copy out when the gap follows
a write in fast memory (no slow access: every write is in fast memory). Different gaps of a buffer
pay at different boundaries, so the gaps are independent "items": a covering LP
    min sum_g c_g x_g  s.t.  sum_{g covers s} size_g x_g >= E_s,  0 <= x_g <= 1
relaxes every schedule (fragmentation ignored). Any y >= 0 gives a dual bound
    LB(y) = sum_s E_s y_s - sum_g max(0, size_g (sum_{s in g} y_s) - c_g),
raised here by exact coordinate ascent (each y_s set to its best value given the others: a
fractional knapsack over the items covering s), a few passes in a fixed order. Rates are integer
millicycles per byte and every breakpoint is an integer, so the bound is exact integer arithmetic.
One y_s alone is the per-step fractional knapsack; the ascent adds steps that no gap spans twice.
Complexity O(passes x sum of lifetimes x log live). Weakness: fragmentation and the copies out of
buffers written long before are not counted, so the gap to the optimum can stay open.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcugen.plan.paging.problem import PagedBuffer, PagingProblem

PASSES = 4


@dataclass(frozen=True)
class _Item:
    size: int
    rate: int  # millicycles per byte when the buffer leaves fast memory in this gap
    lo: int  # steps covered
    hi: int


def _items(problem: PagingProblem, buffers: list[PagedBuffer]) -> list[_Item]:
    """The gaps of every buffer, with their cost per byte (see the module docstring). With slow
    access, a gap (u, next] splits into its inside, which costs a copy in or the slow access at
    `next`, min(in, slow), and `next` itself, which costs the rest of the slow access: both out
    cost at least the slow access, so the two never charge more than a schedule pays."""
    cost = problem.cost
    slow = cost.slow_per_byte
    items: list[_Item] = []
    for b in buffers:
        if slow is not None:
            items.append(_Item(b.size, slow, b.first, b.first))
        for u, nxt in zip(b.uses, b.uses[1:], strict=False):
            if slow is not None:
                inside = min(cost.in_per_byte, slow) if nxt > u + 1 else 0
                if inside:
                    items.append(_Item(b.size, inside, u + 1, nxt - 1))
                items.append(_Item(b.size, slow - inside, nxt, nxt))
            elif nxt > u + 1:
                out = cost.out_per_byte if u in b.writes else 0
                items.append(_Item(b.size, cost.in_per_byte + out, u + 1, nxt - 1))
    return items


def paging_lower_bound(problem: PagingProblem) -> int:
    """Millicycles no schedule of `problem` goes below (0 when everything may fit). A buffer
    larger than the fast memory pays the slow access at every use; the others go to the LP."""
    capacity = problem.capacity // problem.align * problem.align
    fixed = sum(
        b.size * (problem.cost.slow_per_byte or 0) * len(b.uses)
        for b in problem.buffers
        if b.size > capacity
    )
    fitting = [b for b in problem.buffers if b.size <= capacity]
    live = [0] * (problem.steps + 1)
    for b in fitting:
        for s in range(b.first, b.last + 1):
            live[s] += b.size
    excess = {s: bytes_ - capacity for s, bytes_ in enumerate(live) if bytes_ > capacity}
    if not excess:
        return fixed
    items = _items(problem, fitting)
    covering: dict[int, list[int]] = {s: [] for s in excess}
    for k, item in enumerate(items):
        for s in range(item.lo, item.hi + 1):
            if s in covering:
                covering[s].append(k)
    y = dict.fromkeys(excess, 0)
    total = [0] * len(items)  # sum of y over the steps each item covers
    for sweep in range(PASSES):
        ordered = sorted(excess) if sweep % 2 == 0 else sorted(excess, reverse=True)
        for s in ordered:
            best = _best_y(excess[s], [(items[k], total[k] - y[s]) for k in covering[s]])
            for k in covering[s]:
                total[k] += best - y[s]
            y[s] = best
    value = sum(excess[s] * y[s] for s in excess)
    value -= sum(max(0, item.size * (total[k] - item.rate)) for k, item in enumerate(items))
    return fixed + max(0, value)


def _best_y(need: int, items: list[tuple[_Item, int]]) -> int:
    """The y_s that maximises E_s y_s - sum max(0, size (rest + y_s) - c): raise y_s until the
    items whose hinge it has passed cover `need` bytes (a fractional knapsack)."""
    hinges = sorted((item.rate - rest, item.size) for item, rest in items)
    covered = 0
    for at, size in hinges:
        covered += size
        if covered >= need:
            return max(0, at)
    raise AssertionError("a step needs more fast memory than there is: check_feasible first")
