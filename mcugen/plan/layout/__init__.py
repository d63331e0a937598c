"""Arena-layout strategies: a registry of pure functions `buffers -> LayoutResult`.

Every strategy takes the buffers (with lifetimes and alignment) and an optional time budget in
seconds (ignored by the greedies), and returns the offsets with the arena, the live-bytes lower
bound (no layout is smaller), whether the layout is proven optimal, and which strategy produced it
(`auto`: the one it kept), so every report can say how far from optimal it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

# Strategy functions are never named like a module of this package, so that the package attribute
# stays the module (`import mcugen.plan.layout.cpsat as m` must give the module).
from mcugen.plan.buffers import Buffer
from mcugen.plan.layout.auto import choose_layout
from mcugen.plan.layout.cpsat import solve_cpsat
from mcugen.plan.layout.local_search import GREEDIES
from mcugen.plan.layout.local_search import local_search as _local_search
from mcugen.plan.layout.placement import LayoutResult, live_lower_bound
from mcugen.registry import Registry


class LayoutStrategy(Protocol):
    def __call__(
        self, buffers: Sequence[Buffer], *, time_budget: float | None = None
    ) -> LayoutResult: ...


LAYOUTS: Registry[LayoutStrategy] = Registry("layout strategy", default="auto")
DEFAULT = LAYOUTS.default

__all__ = [
    "DEFAULT",
    "LAYOUTS",
    "LayoutResult",
    "LayoutStrategy",
    "get_layout",
    "live_lower_bound",
]


def _offsets_layout(
    name: str, place: Callable[..., Mapping[int, int]], *, budgeted: bool = False
) -> LayoutStrategy:
    """A strategy from a function that returns offsets (the greedies, local search)."""

    def strategy(buffers: Sequence[Buffer], *, time_budget: float | None = None) -> LayoutResult:
        offsets = place(buffers, time_budget=time_budget) if budgeted else place(buffers)
        return LayoutResult.of(name, buffers, offsets)

    strategy.__name__ = name
    strategy.__doc__ = place.__doc__
    return strategy


for _name, _place in GREEDIES.items():
    LAYOUTS.add(_name, _offsets_layout(_name, _place))
LAYOUTS.add("local_search", _offsets_layout("local_search", _local_search, budgeted=True))


@LAYOUTS.register("cpsat")
def cpsat_layout(buffers: Sequence[Buffer], *, time_budget: float | None = None) -> LayoutResult:
    """The best layout CP-SAT finds within the budget, with its proven bound."""
    found = solve_cpsat(buffers, time_budget=time_budget)
    return LayoutResult(
        found.offsets,
        found.arena,
        found.lower_bound,
        found.proven_optimal,
        "cpsat",
        note=found.note,
    )


@LAYOUTS.register("auto")
def auto_layout(buffers: Sequence[Buffer], *, time_budget: float | None = None) -> LayoutResult:
    """The greedies, then local search, then CP-SAT while a gap remains (layout/auto.py)."""
    return choose_layout(buffers, time_budget=time_budget)


def get_layout(name: str) -> LayoutStrategy:
    """The layout strategy registered as `name` (one-line user error listing the names if none)."""
    return LAYOUTS.get(name)
