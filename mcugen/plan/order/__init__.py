"""Operator-order strategies: a registry of pure functions `Graph -> tuple[int, ...]`.

Only `stored` exists so far (the file's order, as TFLM runs it); the memory-aware strategies of the
scheduling issue plug in here under their own names.
"""

from __future__ import annotations

from collections.abc import Callable

from mcugen.errors import McugenError
from mcugen.model.ir import Graph

OrderStrategy = Callable[[Graph], tuple[int, ...]]


def stored_order(graph: Graph) -> tuple[int, ...]:
    """The order of the operators in the file. O(n)."""
    return tuple(op.index for op in graph.operators)


ORDERS: dict[str, OrderStrategy] = {"stored": stored_order}
DEFAULT = "stored"


def get_order(name: str) -> OrderStrategy:
    try:
        return ORDERS[name]
    except KeyError:
        known = ", ".join(sorted(ORDERS))
        raise McugenError(
            f"unknown order strategy '{name}'", hint=f"choose one of: {known}"
        ) from None
