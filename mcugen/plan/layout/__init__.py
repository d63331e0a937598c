"""Arena-layout strategies: a registry of pure functions `buffers -> offsets`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcugen.errors import McugenError
from mcugen.plan.buffers import Buffer
from mcugen.plan.layout.greedy import greedy_by_size

LayoutStrategy = Callable[[Sequence[Buffer]], dict[int, int]]

LAYOUTS: dict[str, LayoutStrategy] = {"greedy_by_size": greedy_by_size}
DEFAULT = "greedy_by_size"


def get_layout(name: str) -> LayoutStrategy:
    try:
        return LAYOUTS[name]
    except KeyError:
        known = ", ".join(sorted(LAYOUTS))
        raise McugenError(
            f"unknown layout strategy '{name}'", hint=f"choose one of: {known}"
        ) from None
