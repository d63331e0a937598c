"""Operator-order strategies: a registry of pure functions `(graph, ...) -> OrderResult`.

Every strategy returns a valid topological order with its peak live bytes (tensor sizes rounded up
to the arena alignment, scratch included) and a lower bound on the peak of *any* order, so reports
can say how far from optimal the order is. Strategies register themselves in `ORDERS` by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.plan.buffers import activation_buffers, live_bytes_per_step, op_working_set_bound


@dataclass(frozen=True)
class OrderResult:
    order: tuple[int, ...]
    peak_live_bytes: int
    lower_bound: int  # no order of this graph has a smaller peak
    proven_optimal: bool = False
    note: str = ""  # e.g. "time budget reached: best order found so far"


class OrderStrategy(Protocol):
    def __call__(
        self,
        graph: Graph,
        *,
        scratch: Mapping[int, int] | None = None,
        time_budget: float | None = None,
    ) -> OrderResult: ...


def peak_of(graph: Graph, order: tuple[int, ...], scratch: Mapping[int, int] | None = None) -> int:
    """Peak live bytes of `order` (the lower bound of any layout for it)."""
    return max(
        live_bytes_per_step(activation_buffers(graph, order, scratch), len(order)), default=0
    )


def stored_order(
    graph: Graph, *, scratch: Mapping[int, int] | None = None, time_budget: float | None = None
) -> OrderResult:
    """The order of the operators in the file, as TFLM runs it. O(n)."""
    order = tuple(op.index for op in graph.operators)
    peak = peak_of(graph, order, scratch)
    bound = op_working_set_bound(graph, scratch)
    return OrderResult(order, peak, bound, proven_optimal=peak == bound)


ORDERS: dict[str, OrderStrategy] = {"stored": stored_order}
#: "auto" as an order alone is the best candidate by peak live bytes; `plan_memory` treats it as
#: the joint search (plan/joint.py), choosing by the arena after aliasing and layout.
DEFAULT = "auto"


def register(name: str) -> Callable[[OrderStrategy], OrderStrategy]:
    def wrap(fn: OrderStrategy) -> OrderStrategy:
        ORDERS[name] = fn
        return fn

    return wrap


def get_order(name: str) -> OrderStrategy:
    try:
        return ORDERS[name]
    except KeyError:
        known = ", ".join(sorted(ORDERS))
        raise McugenError(
            f"unknown order strategy '{name}'", hint=f"choose one of: {known}"
        ) from None


# Strategies defined in their own modules register themselves on import.
from mcugen.plan.order import greedy, optimal  # noqa: E402, F401

AUTO_CANDIDATES = ("stored", "greedy", "optimal")


@register("auto")
def auto_order(
    graph: Graph, *, scratch: Mapping[int, int] | None = None, time_budget: float | None = None
) -> OrderResult:
    """The candidate (stored, greedy, optimal) with the smallest peak; ties keep the earlier."""
    results = [
        ORDERS[name](graph, scratch=scratch, time_budget=time_budget) for name in AUTO_CANDIDATES
    ]
    best = min(enumerate(results), key=lambda e: (e[1].peak_live_bytes, e[0]))[1]
    bound = max(r.lower_bound for r in results)
    return OrderResult(
        best.order,
        best.peak_live_bytes,
        bound,
        best.proven_optimal or best.peak_live_bytes <= bound,
        best.note,
    )
