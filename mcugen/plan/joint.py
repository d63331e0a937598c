"""Joint search: choose the operator order for the arena it leads to, not only for its live bytes.

Steps: for each candidate order strategy (stored, greedy, optimal by default), compute its order,
apply in-place aliasing for that order (views, element-wise in place, concatenation slices: what
the arena can share depends on which tensors die where), lay the buffers out with the chosen layout
strategy, and keep the smallest arena; ties keep the earlier candidate, so the file's own order wins
when nothing is gained. Identical orders are evaluated once.
Complexity: the sum of the candidates' order and layout costs; the time budget is shared (half to
the exact order search, the rest split over the layouts).
Weakness: candidates are whole orders from separate strategies; no search over orders that are
suboptimal in live bytes but lay out better (SERENITY and HMCOS report that this is rarely large).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from mcugen.model.ir import Graph
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan.aliasing import aliases_for
from mcugen.plan.buffers import Buffer, activation_buffers
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.staging import staging_scratch

AUTO = "auto"
CANDIDATES = orders.AUTO_CANDIDATES
DEFAULT_BUDGET_S = 1.0


def plan_one(
    graph: Graph,
    order_name: str,
    layout_name: str,
    *,
    scratch: Mapping[int, int] | None,
    in_place: bool,
    aliases: Mapping[int, tuple[int, int]] | None,
    order_budget: float | None,
    layout_budget: float | None,
    profiles: bool = True,
) -> MemoryPlan:
    """One order strategy, aliasing for that order (if `in_place`), one layout strategy. Shared
    storage lowers the live bytes but can fragment the layout, and aliasing is greedy: when the
    aliases are ours to choose, they are laid out with and without convolutions in place and
    with nothing shared, and the smallest arena kept (ties: the earlier, more shared)."""
    start = time.perf_counter()
    result = orders.get_order(order_name)(graph, scratch=scratch, time_budget=order_budget)
    choices: list[Mapping[int, tuple[int, int]] | None] = [aliases]
    if aliases is None and in_place:
        choices = [
            aliases_for(graph, result.order, scratch=scratch, profiles=profiles),
            aliases_for(
                graph, result.order, scratch=scratch, convolutions=False, profiles=profiles
            ),
            None,
        ]
        choices = [c for k, c in enumerate(choices) if c not in choices[:k]]  # once each
    layout = layouts.get_layout(layout_name)
    best: tuple[int, tuple[Buffer, ...], Mapping[int, int]] | None = None
    for choice in choices:
        with_staging = staging_scratch(graph, choice, scratch) if choice else scratch
        buffers = activation_buffers(graph, result.order, with_staging, choice, profiles=profiles)
        offsets = layout(
            buffers, time_budget=layout_budget / len(choices) if layout_budget else None
        )
        arena = max((offsets[b.id] + b.size for b in buffers), default=0)
        if best is None or arena < best[0]:
            best = (arena, buffers, offsets)
    assert best is not None
    return MemoryPlan(
        order=result.order,
        buffers=best[1],
        offsets=MappingProxyType(dict(best[2])),
        order_strategy=order_name,
        layout_strategy=layout_name,
        plan_seconds=time.perf_counter() - start,
        order_lower_bound=result.lower_bound,
        order_proven_optimal=result.proven_optimal,
        note=result.note,
    )


def plan_jointly(
    graph: Graph,
    layout_name: str,
    *,
    scratch: Mapping[int, int] | None,
    in_place: bool,
    time_budget: float | None,
    candidates: tuple[str, ...] = CANDIDATES,
    profiles: bool = True,
) -> MemoryPlan:
    """The candidate order whose plan has the smallest arena (see the module docstring)."""
    start = time.perf_counter()
    budget = DEFAULT_BUDGET_S if time_budget is None else time_budget
    layout_budget = budget / (2 * len(candidates))
    best: MemoryPlan | None = None
    seen: set[tuple[int, ...]] = set()
    bound = 0
    for name in candidates:
        plan = plan_one(
            graph,
            name,
            layout_name,
            scratch=scratch,
            in_place=in_place,
            aliases=None,
            order_budget=budget / 2,
            layout_budget=layout_budget,
            profiles=profiles,
        )
        bound = max(bound, plan.order_lower_bound)
        if plan.order in seen:
            continue
        seen.add(plan.order)
        if best is None or plan.arena_bytes < best.arena_bytes:
            best = plan
    assert best is not None
    return replace(
        best,
        order_strategy=f"{AUTO}({best.order_strategy})",
        order_lower_bound=bound,
        order_proven_optimal=best.order_proven_optimal or best.lower_bound <= bound,
        plan_seconds=time.perf_counter() - start,
    )
