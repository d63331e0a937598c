"""Layouts remembered for the length of one planning call (`mcugen.pipeline.prepare`).

A layout strategy is a pure function of its buffers and its time budget (every budget is work,
never measured time), so a second call with equal buffers may take the first call's result. The
kernel choice (mcugen/kernel_choice.py) plans many kernel trials in the same few orders, and
trials that differ only in layers away from the peak, or that two ladder starts both reach, give
equal buffers: inception8 laid out 11 of its 32 layouts twice or more (2.4 s of 6.7).
Inside `remembering()`, `remembered(name, strategy)` looks a layout up by (strategy name,
buffers in their order, budget) before making it; outside, it is the strategy itself. The memo
lives as long as the outermost `remembering()` block (a context variable, so it never leaks
between calls or threads). Complexity: a hash of the buffers per call; memory, one result per
distinct layout of the block.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from mcugen.plan.buffers import Buffer
from mcugen.plan.layout import LayoutStrategy
from mcugen.plan.layout.placement import LayoutResult

_Key = tuple[str, tuple[Buffer, ...], float | None]
_MEMO: ContextVar[dict[_Key, LayoutResult] | None] = ContextVar("layout_memo", default=None)


@contextmanager
def remembering() -> Iterator[None]:
    """Remember layouts until the outermost such block ends (an inner block shares its memo)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def remembered(name: str, strategy: LayoutStrategy) -> LayoutStrategy:
    """`strategy` (registered as `name`), its results looked up first inside `remembering()`."""

    def lay_out(buffers: Sequence[Buffer], *, time_budget: float | None = None) -> LayoutResult:
        memo = _MEMO.get()
        if memo is None:
            return strategy(buffers, time_budget=time_budget)
        key = (name, tuple(buffers), time_budget)
        if key not in memo:
            memo[key] = strategy(buffers, time_budget=time_budget)
        return memo[key]

    return lay_out
