"""A lower bound on the cost of every paging schedule, independent of the CP-SAT search.

At step s, at least E_s = live bytes - C bytes are not in fast memory. A buffer out of fast memory
somewhere in the gap between two of its uses pays, inside that gap, a copy in before its next use
or (when kernels may work in slow memory) a slow access at it, plus a copy out when the gap follows
a write in fast memory (no slow access: every write is in fast memory). Different gaps of a buffer
pay at different boundaries, so the gaps are independent "items": a covering LP
    min sum_g c_g x_g  s.t.  sum_{g covers s} size_g x_g >= E_s,  0 <= x_g <= 1
relaxes every schedule (fragmentation ignored). Any y >= 0 gives a dual bound
    LB(y) = sum_s E_s y_s - sum_g max(0, size_g (sum_{s in g} y_s) - c_g),
evaluated exactly (fractions) for two y: the optimal LP duals from OR-Tools' GLOP (the LP
optimum; its floating point only picks y, it cannot make the bound invalid), and an exact
coordinate ascent needing no solver (each y_s set to its best value given the others, a
fractional knapsack over the items covering s, a few passes in a fixed order); the larger wins.
The LP also pays each write's copy out once over all the gaps up to the next write
(z_segment >= x_gap; with slow access z_segment + x_write >= x_gap, as a buffer out of fast memory
at its write step is written in slow memory and owes no copy out); the ascent counts it only
without slow access, in the gap right after the write.
Complexity O(passes x sum of lifetimes x log live) plus one LP of (gaps x excess steps).
Weakness: fragmentation is not counted, so the gap to the optimum can stay open.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mcugen.plan.paging.problem import PagedBuffer, PagingProblem

PASSES = 4


@dataclass(frozen=True)
class _Item:
    size: int
    rate: int  # millicycles per byte when the buffer leaves fast memory in this gap
    lo: int  # steps covered
    hi: int
    #: Without slow access: the write before this gap (its copy out is paid once for all the
    #: gaps up to the next write: the buffer is newer than slow until it first leaves), -1 none;
    #: and that copy's millicycles per byte, counted in `rate` of the gap right after the write
    #: (the solver-free ascent) or once per segment (the LP).
    segment: tuple[int, int] = (-1, -1)
    out: int = 0
    after_write: bool = False
    #: With slow access: the item that covers the segment's write step (the buffer may be
    #: written in slow memory there instead, and then owes no copy out), -1 none.
    anchor: int = -1

    @property
    def combined(self) -> int:
        """The rate when each gap stands alone: the copy out only right after the write."""
        return self.rate + (self.out if self.after_write else 0)


def _items(problem: PagingProblem, buffers: list[PagedBuffer]) -> list[_Item]:
    """The gaps of every buffer, with their cost per byte (see the module docstring). With slow
    access, a gap (u, next] splits into its inside, which costs a copy in or the slow access at
    `next`, min(in, slow), and `next` itself, which costs the rest of the slow access: both out
    cost at least the slow access, so the two never charge more than a schedule pays."""
    cost = problem.cost
    slow = cost.slow_per_byte
    items: list[_Item] = []
    for b in buffers:
        at_use = len(items)  # the item covering the current use step (with slow access)
        if slow is not None:
            items.append(_Item(b.size, slow, b.first, b.first))
        write, anchor = b.first, at_use
        for u, nxt in zip(b.uses, b.uses[1:], strict=False):
            if u in b.writes:
                write, anchor = u, at_use
            if slow is not None:
                segment, out = (b.id, write), cost.out_per_byte
                inside = min(cost.in_per_byte, slow) if nxt > u + 1 else 0
                if inside:
                    items.append(_Item(b.size, inside, u + 1, nxt - 1, segment, out, False, anchor))
                at_use = len(items)
                items.append(_Item(b.size, slow - inside, nxt, nxt, segment, out, False, anchor))
            elif nxt > u + 1:
                segment = (b.id, write)
                item = _Item(
                    b.size, cost.in_per_byte, u + 1, nxt - 1, segment, cost.out_per_byte, u == write
                )
                items.append(item)
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
    ascent = _dual_value(items, covering, excess, {s: Fraction(v) for s, v in y.items()})
    duals = _lp_duals(items, covering, excess)
    exact = _dual_value(items, covering, excess, *duals) if duals else 0
    return fixed + max(0, ascent, exact)


def _dual_value(
    items: list[_Item],
    covering: dict[int, list[int]],
    excess: dict[int, int],
    y: dict[int, Fraction],
    w: list[Fraction] | None = None,
) -> int:
    """The dual objective at (y, w), exactly, rounded down: valid for any y, w >= 0.
    Without w, the LP where each gap stands alone (rates `combined`); with w (a price per gap on
    "its segment's copy out, or its anchor, covers it"), the LP where a segment pays once:
    sum E_s y_s - sum_g max(0, size_g Y_g - w_g + sum_{h anchored at g} w_h - size_g rate_g)
                - sum_segments max(0, sum_{g in it} w_g - size out)."""
    total = [Fraction(0)] * len(items)
    for s, ks in covering.items():
        for k in ks:
            total[k] += y[s]
    value = sum((excess[s] * y[s] for s in excess), Fraction(0))
    segments: dict[tuple[int, int], Fraction] = {}
    anchored = [Fraction(0)] * len(items)
    for k, item in enumerate(items):
        if w is not None and item.anchor >= 0:
            anchored[item.anchor] += w[k]
    for k, item in enumerate(items):
        if w is None:
            value -= max(Fraction(0), item.size * (total[k] - item.combined))
            continue
        value -= max(Fraction(0), item.size * (total[k] - item.rate) - w[k] + anchored[k])
        if item.segment[0] >= 0:
            segments[item.segment] = segments.get(item.segment, Fraction(0)) + w[k]
    sizes = {item.segment: item.size * item.out for item in items}
    value -= sum((max(Fraction(0), v - sizes[key]) for key, v in segments.items()), Fraction(0))
    return math.floor(value)


def _lp_duals(
    items: list[_Item], covering: dict[int, list[int]], excess: dict[int, int]
) -> tuple[dict[int, Fraction], list[Fraction]] | None:
    """The optimal dual prices (y, w) of the segment LP (OR-Tools' GLOP, a deterministic
    simplex), None without a solution. Floating point is harmless: the prices are only a point
    to evaluate exactly, and every y, w >= 0 gives a valid bound."""
    from ortools.linear_solver import pywraplp

    solver = pywraplp.Solver.CreateSolver("GLOP")
    if solver is None:
        return None
    x = [solver.NumVar(0.0, 1.0, f"x{k}") for k in range(len(items))]
    objective = solver.Objective()
    z: dict[tuple[int, int], Any] = {}
    links: list[Any] = []
    for k, item in enumerate(items):
        objective.SetCoefficient(x[k], float(item.size * item.rate))
        if item.segment[0] < 0:
            links.append(None)
            continue
        if item.segment not in z:
            z[item.segment] = solver.NumVar(0.0, 1.0, f"z{len(z)}")
            objective.SetCoefficient(z[item.segment], float(item.size * item.out))
        link = solver.Constraint(0.0, solver.infinity())  # z_segment + x_anchor >= x_k
        link.SetCoefficient(z[item.segment], 1.0)
        link.SetCoefficient(x[k], -1.0)
        if item.anchor >= 0:
            link.SetCoefficient(x[item.anchor], 1.0)
        links.append(link)
    rows = {}
    for s in sorted(excess):
        rows[s] = solver.Constraint(float(excess[s]), solver.infinity())
        for k in covering[s]:
            rows[s].SetCoefficient(x[k], float(items[k].size))
    objective.SetMinimization()
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return None
    y = {s: Fraction(max(0.0, rows[s].dual_value())) for s in excess}
    w = [Fraction(max(0.0, link.dual_value())) if link else Fraction(0) for link in links]
    return y, w


def _best_y(need: int, items: list[tuple[_Item, int]]) -> int:
    """The y_s that maximises E_s y_s - sum max(0, size (rest + y_s) - c): raise y_s until the
    items whose hinge it has passed cover `need` bytes (a fractional knapsack)."""
    hinges = sorted((item.combined - rest, item.size) for item, rest in items)
    covered = 0
    for at, size in hinges:
        covered += size
        if covered >= need:
            return max(0, at)
    raise AssertionError("a step needs more fast memory than there is: check_feasible first")
