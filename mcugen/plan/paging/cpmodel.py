"""The CP-SAT model of paging, over all steps or over a window of them (for exact.py).

One cell per buffer and step of its lifetime inside the window [lo, hi]:
1. f[b,s]: b is in fast memory at step s (fixed to 1 where it is used and kernels may not work
   in slow memory); o[b,s]: its offset there, in units of the greatest common divisor of the
   sizes (lossless: dropping every buffer as low as it goes leaves offsets that are sums of
   sizes), inside [0, C - size]; 0 when not in fast memory.
2. At every step, the optional intervals [o, o + size) of the buffers there do not overlap
   (AddNoOverlap per step: the time x address no-overlap of plan/layout/cpsat.py, cut by step).
3. m[b,s]: b moves to another fast offset before s; the offset stays put across a boundary
   where b is in fast memory on both sides and does not move.
4. i[b,s] >= f[b,s] - f[b,s-1], i >= m: a copy in. d[b,s]: after step s the fast copy is newer
   than the slow one: d = f at a write step, else d >= d[b,s-1] + f[b,s] - m[b,s] - 1.
   u[b,s] >= d[b,s-1] - f[b,s], u >= d[b,s-1] + m - 1: a copy out.
5. Cost: sum size x (copy rates x (i, u) + slow access rate x (1 - f) at uses).
These are exactly the rules of schedule.schedule_of. A window model adds the steps lo - 1 and
hi + 1 around it, fixed to the incumbent's locations (and its newer-than-slow state at lo - 1; at
hi + 1 no newer than the incumbent's, so the steps after the window cost no more than they did).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcugen.plan.paging.problem import PagedBuffer, PagingProblem
from mcugen.plan.paging.schedule import SLOW


@dataclass
class Cells:
    """The variables of one buffer, by step."""

    f: dict[int, Any] = field(default_factory=dict)
    o: dict[int, Any] = field(default_factory=dict)
    m: dict[int, Any] = field(default_factory=dict)
    i: dict[int, Any] = field(default_factory=dict)
    u: dict[int, Any] = field(default_factory=dict)
    d: dict[int, Any] = field(default_factory=dict)


@dataclass
class PagingModel:
    model: Any
    cells: dict[int, Cells]
    terms: list[tuple[int, Any]]  # (millicycles, literal or 1 - literal)
    unit: int
    lo: int
    hi: int

    def objective(self) -> Any:
        return sum(coef * var for coef, var in self.terms)

    def timeline_part(self, solver: Any, b: PagedBuffer) -> dict[int, int]:
        """Step -> location of `b` in the solution, for the steps inside the window."""
        c = self.cells[b.id]
        return {
            s: self.unit * solver.value(c.o[s]) if solver.value(c.f[s]) else SLOW
            for s in c.f
            if self.lo <= s <= self.hi
        }


def dirty_states(problem: PagingProblem, b: PagedBuffer, places: tuple[int, ...]) -> list[bool]:
    """Per step of `b`'s life: its fast copy is newer than the slow one after the step (the
    replay of schedule.schedule_of's rule)."""
    dirty, found = False, []
    for k, s in enumerate(range(b.first, b.last + 1)):
        if k and places[k] != places[k - 1]:
            dirty = False
        if s in b.writes:
            dirty = places[k] != SLOW
        found.append(dirty)
    return found


def build(
    problem: PagingProblem,
    unit: int,
    incumbent: Mapping[int, tuple[int, ...]],
    lo: int = 0,
    hi: int | None = None,
) -> PagingModel:
    """The model of the steps lo..hi (all steps by default), hinted with `incumbent`."""
    from ortools.sat.python import cp_model

    hi = problem.steps if hi is None else hi
    model = cp_model.CpModel()
    pm = PagingModel(model, {}, [], unit, lo, hi)
    for b in problem.buffers:
        first, last = max(b.first, lo - 1), min(b.last, hi + 1)
        if first > hi or last < lo:
            continue
        places = incumbent[b.id]
        dirty = dirty_states(problem, b, places)
        pm.cells[b.id] = _cells(model, problem, b, unit, first, last)
        _hint(model, pm.cells[b.id], b, places, dirty, unit)
        for s in {first, last} - set(range(lo, hi + 1)):
            _fix(model, pm.cells[b.id], s, places[s - b.first], dirty[s - b.first], unit, s < lo)
        pm.terms += _cost_terms(problem, b, pm.cells[b.id], lo, hi)
    _no_overlap(model, problem, pm.cells, unit, lo, hi)
    return pm


def _fix(model: Any, c: Cells, s: int, where: int, dirty: bool, unit: int, before: bool) -> None:
    """A step just outside the window keeps the incumbent's location."""
    model.add(c.f[s] == int(where != SLOW))
    model.add(c.o[s] == (where // unit if where != SLOW else 0))
    if before:
        model.add(c.d[s] == int(dirty))
    elif not dirty:
        model.add(c.d[s] == 0)


def _cells(
    model: Any, problem: PagingProblem, b: PagedBuffer, unit: int, first: int, last: int
) -> Cells:
    """The variables and transition constraints of one buffer over first..last (items 1, 3, 4)."""
    top = (problem.capacity - b.size) // unit
    c = Cells()
    for s in range(first, last + 1):
        c.f[s] = model.new_bool_var(f"f{b.id}_{s}")
        c.o[s] = model.new_int_var(0, max(top, 0), f"o{b.id}_{s}")
        c.d[s] = model.new_bool_var(f"d{b.id}_{s}")
        model.add(c.o[s] == 0).only_enforce_if(~c.f[s])
        if top < 0:
            model.add(c.f[s] == 0)
        if problem.must_be_fast(b, s):
            model.add(c.f[s] == 1)
        model.add(c.d[s] <= c.f[s])
        if s in b.writes:
            model.add(c.d[s] == c.f[s])
        if s == first:
            continue
        p = s - 1
        c.m[s] = model.new_bool_var(f"m{b.id}_{s}")
        c.i[s] = model.new_bool_var(f"i{b.id}_{s}")
        c.u[s] = model.new_bool_var(f"u{b.id}_{s}")
        model.add(c.m[s] <= c.f[s])
        model.add(c.m[s] <= c.f[p])
        model.add(c.o[s] == c.o[p]).only_enforce_if([c.f[s], c.f[p], ~c.m[s]])
        model.add(c.i[s] >= c.f[s] - c.f[p])
        model.add(c.i[s] >= c.m[s])
        model.add(c.u[s] >= c.d[p] - c.f[s])
        model.add(c.u[s] >= c.d[p] + c.m[s] - 1)
        if s not in b.writes:
            model.add(c.d[s] >= c.d[p] + c.f[s] - c.m[s] - 1)
    return c


def _no_overlap(
    model: Any, problem: PagingProblem, cells: dict[int, Cells], unit: int, lo: int, hi: int
) -> None:
    """Item 2: at each step of the window, the fast buffers' address intervals are disjoint."""
    by_step: dict[int, list[Any]] = {}
    for b in problem.buffers:
        if b.id not in cells:
            continue
        c = cells[b.id]
        for s in c.f:
            if lo <= s <= hi:
                interval = model.new_optional_fixed_size_interval_var(
                    c.o[s], b.size // unit, c.f[s], f"x{b.id}_{s}"
                )
                by_step.setdefault(s, []).append(interval)
    for s in sorted(by_step):
        if len(by_step[s]) > 1:
            model.add_no_overlap(by_step[s])


def _cost_terms(
    problem: PagingProblem, b: PagedBuffer, c: Cells, lo: int, hi: int
) -> list[tuple[int, Any]]:
    """Item 5 for one buffer: copies at the boundaries lo..hi + 1, slow accesses at lo..hi."""
    cost = problem.cost
    terms: list[tuple[int, Any]] = []
    for s in c.i:
        terms.append((b.size * cost.in_per_byte, c.i[s]))
        terms.append((b.size * cost.out_per_byte, c.u[s]))
    if cost.slow_per_byte is not None:
        for s in b.uses:
            if lo <= s <= hi:
                terms.append((b.size * cost.slow_per_byte, 1 - c.f[s]))
    return terms


def _hint(
    model: Any, c: Cells, b: PagedBuffer, places: tuple[int, ...], dirty: list[bool], unit: int
) -> None:
    """The incumbent's locations (and the copies they imply) as the hint of one buffer's cells."""
    for s in c.f:
        k = s - b.first
        where = places[k]
        inside = where != SLOW
        model.add_hint(c.f[s], inside)
        model.add_hint(c.o[s], where // unit if inside and where % unit == 0 else 0)
        model.add_hint(c.d[s], dirty[k])
        if s in c.m:
            prev = places[k - 1]
            model.add_hint(c.m[s], inside and prev != SLOW and where != prev)
            model.add_hint(c.i[s], inside and where != prev)
            model.add_hint(c.u[s], dirty[k - 1] and prev != SLOW and where != prev)
