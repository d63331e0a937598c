"""Operator-order strategies: a registry of pure functions `(graph, ...) -> OrderResult`.

Every strategy returns a valid topological order with its peak live bytes (tensor sizes rounded up
to the arena alignment, scratch included) and a lower bound on the peak of *any* order, so reports
can say how far from optimal the order is. Strategies register themselves in `ORDERS` by name.

A strategy may be handed `evaluate(order, layout_budget) -> (arena, shared peak)`: the arena the
rest of the planner (sharing, then layout) reaches for an order. `auto` uses it to choose among its
candidates by arena rather than by live bytes (the joint search); the others ignore it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from mcugen.model.ir import Graph
from mcugen.plan.buffers import activation_buffers, live_bytes_per_step, op_working_set_bound
from mcugen.registry import Registry


@dataclass(frozen=True)
class OrderResult:
    order: tuple[int, ...]
    peak_live_bytes: int
    lower_bound: int  # no order of this graph has a smaller peak
    proven_optimal: bool = False
    note: str = ""  # e.g. "time budget reached: best order found so far"
    chosen: str = ""  # auto: the candidate strategy whose order won


class ArenaOf(Protocol):
    """(order, layout time budget, ceiling) -> (arena bytes, peak live bytes after sharing) of
    that order. With a `ceiling`, an order that cannot lay out below it is not laid out (no
    sharing choice peaks below it) or not kept, and (ceiling, ceiling) is returned: what its
    arena is not below."""

    def __call__(
        self, order: tuple[int, ...], budget: float | None, ceiling: int | None = None, /
    ) -> tuple[int, int]: ...


class OrderStrategy(Protocol):
    def __call__(
        self,
        graph: Graph,
        *,
        scratch: Mapping[int, int] | None = None,
        time_budget: float | None = None,
        evaluate: ArenaOf | None = None,
    ) -> OrderResult: ...


def peak_of(graph: Graph, order: tuple[int, ...], scratch: Mapping[int, int] | None = None) -> int:
    """Peak live bytes of `order` (the lower bound of any layout for it)."""
    return max(
        live_bytes_per_step(activation_buffers(graph, order, scratch), len(order)), default=0
    )


#: "auto" is the best of its candidates: by arena when the planner can evaluate one, else by
#: peak live bytes.
ORDERS: Registry[OrderStrategy] = Registry("order strategy", default="auto")


@ORDERS.register("stored")
def stored_order(
    graph: Graph,
    *,
    scratch: Mapping[int, int] | None = None,
    time_budget: float | None = None,
    evaluate: ArenaOf | None = None,
) -> OrderResult:
    """The order of the operators in the file, as TFLM runs it. O(n)."""
    order = tuple(op.index for op in graph.operators)
    peak = peak_of(graph, order, scratch)
    bound = op_working_set_bound(graph, scratch)
    return OrderResult(order, peak, bound, proven_optimal=peak == bound)


# Strategies defined in their own modules register themselves on import.
from mcugen.plan.order import greedy, optimal  # noqa: E402, F401

DEFAULT = ORDERS.default
AUTO_CANDIDATES = ("stored", "greedy", "optimal")


@ORDERS.register("auto")
def auto_order(
    graph: Graph,
    *,
    scratch: Mapping[int, int] | None = None,
    time_budget: float | None = None,
    evaluate: ArenaOf | None = None,
) -> OrderResult:
    """The candidate (stored, greedy, optimal) with the smallest arena after sharing and layout
    (`evaluate`; without it, the smallest peak live bytes); ties keep the earlier, so the file's
    own order wins when nothing is gained. Each candidate runs with the budget it gets when it is
    asked for by name, and is laid out with the layout's own budget, so its arena is exactly the
    one `--order <candidate>` plans and auto is never above any of them. Identical orders are
    evaluated once, the least unshared peak first, and a later one only below the best arena so
    far (its ceiling: nas_cells8 lays out 1 order of 3). The bound is the best of the
    candidates' (unshared) bounds.
    Complexity: the candidates' searches plus one evaluation per distinct order. Weakness:
    candidates are whole orders from separate strategies; no search over orders that are worse
    in live bytes but lay out better (SERENITY and HMCOS report that this is rarely large)."""
    if evaluate is None:
        results = [
            ORDERS[name](graph, scratch=scratch, time_budget=time_budget)
            for name in AUTO_CANDIDATES
        ]
        k, best = min(enumerate(results), key=lambda e: (e[1].peak_live_bytes, e[0]))
        bound = max(r.lower_bound for r in results)
        proven = best.proven_optimal or best.peak_live_bytes <= bound
        return replace(best, lower_bound=bound, proven_optimal=proven, chosen=AUTO_CANDIDATES[k])
    distinct: dict[tuple[int, ...], tuple[int, str, OrderResult]] = {}
    bound = 0
    for k, name in enumerate(AUTO_CANDIDATES):
        result = ORDERS[name](graph, scratch=scratch, time_budget=time_budget)
        bound = max(bound, result.lower_bound)
        distinct.setdefault(result.order, (k, name, result))
    winner: tuple[int, int, str, OrderResult] | None = None  # arena, k, name, result
    # the likely winner first (the least unshared peak): the others are then laid out only when
    # they could beat its arena, (arena, k) ordering them as when evaluated in turn
    for k, name, result in sorted(distinct.values(), key=lambda c: (c[2].peak_live_bytes, c[0])):
        ceiling = None if winner is None else winner[0] + (k < winner[1])
        arena, _ = evaluate(result.order, time_budget, ceiling)
        if winner is None or (arena, k) < winner[:2]:
            winner = (arena, k, name, result)
    assert winner is not None
    _, _, name, best = winner
    proven = best.proven_optimal or best.peak_live_bytes <= bound
    return replace(best, lower_bound=bound, proven_optimal=proven, chosen=name)


def get_order(name: str) -> OrderStrategy:
    """The order strategy registered as `name` (one-line user error listing the names if none)."""
    return ORDERS.get(name)
