"""Arena-layout strategies: a registry of pure functions `buffers -> offsets`.

Every strategy takes the buffers (with lifetimes and alignment) and an optional time budget in
seconds (ignored by the greedies), and returns buffer id -> byte offset. `live_lower_bound` is the
peak of live bytes: no layout is smaller, so every report can say how far from optimal it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mcugen.errors import McugenError
from mcugen.plan.buffers import Buffer

# Functions named like their module are imported under another name, so that the package
# attribute stays the module (`import mcugen.plan.layout.cpsat as m` must give the module).
from mcugen.plan.layout.auto import auto as _auto
from mcugen.plan.layout.best_fit import best_fit as _best_fit
from mcugen.plan.layout.best_fit import greedy_by_conflicts
from mcugen.plan.layout.breadth import greedy_by_breadth
from mcugen.plan.layout.cpsat import cpsat as _cpsat
from mcugen.plan.layout.greedy import greedy_by_size
from mcugen.plan.layout.local_search import local_search as _local_search
from mcugen.plan.layout.placement import live_lower_bound


class LayoutStrategy(Protocol):
    def __call__(
        self, buffers: Sequence[Buffer], *, time_budget: float | None = None
    ) -> dict[int, int]: ...


LAYOUTS: dict[str, LayoutStrategy] = {
    "greedy_by_size": greedy_by_size,
    "greedy_by_breadth": greedy_by_breadth,
    "greedy_by_conflicts": greedy_by_conflicts,
    "best_fit": _best_fit,
    "local_search": _local_search,
    "cpsat": _cpsat,
    "auto": _auto,
}
DEFAULT = "auto"

__all__ = ["DEFAULT", "LAYOUTS", "LayoutStrategy", "get_layout", "live_lower_bound"]


def get_layout(name: str) -> LayoutStrategy:
    try:
        return LAYOUTS[name]
    except KeyError:
        known = ", ".join(sorted(LAYOUTS))
        raise McugenError(
            f"unknown layout strategy '{name}'", hint=f"choose one of: {known}"
        ) from None
