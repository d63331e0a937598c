"""Results of pure planning steps remembered for the length of one planning call
(`mcugen.pipeline.prepare`, and `mcugen plan` with its strategy rows).

A layout strategy is a pure function of its buffers and its time budget (every budget is work,
never measured time), and the sharing choices of an order (plan/sharing_choices.py) a pure
function of the graph, the order, the scratch and the traits. The kernel choice
(mcugen/kernel_choice.py) plans many kernel trials in the same few orders, bounding each first
by its sharing choices' peaks (`peak_in_order`) and then laying the same choices out; trials
that differ only in layers away from the peak, or that two ladder starts both reach, give equal
buffers; and the strategy rows of `mcugen plan` re-plan orders the default plan laid out.
inception8 laid out 11 of its 32 layouts twice or more (2.4 s of 6.7 s) and computed 17 of its
30 sets of sharing choices again (2.2 s of 3.5 s).

Inside `remembering()`, `recall(key, make)` returns the result kept under `key` or makes and
keeps it; outside, it just makes it. The memo lives as long as the outermost `remembering()`
block (a context variable: it never leaks between calls or threads). A key holds values
compared by equality, or objects compared by identity (`Same`: a graph's tensors and
operators, which `dataclasses.replace` keeps when only the outputs change); the key keeps them
alive, so an identity is never reused while it is remembered. Complexity: a hash of the key per
call; memory, one result per distinct key in the block.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from mcugen.plan.buffers import Buffer

if TYPE_CHECKING:
    from mcugen.plan.layout import LayoutResult, LayoutStrategy

T = TypeVar("T")
_MEMO: ContextVar[dict[Hashable, Any] | None] = ContextVar("planning_memo", default=None)


class Same:
    """An object in a memo key compared by identity, not by value (a tuple of thousands of
    tensors hashed at every call would cost what the memo saves)."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.obj is self.obj


@contextmanager
def remembering() -> Iterator[None]:
    """Remember results until the outermost such block ends (an inner block shares its memo)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def recall(key: Hashable, make: Callable[[], T]) -> T:
    """The result kept under `key` inside `remembering()`, made and kept the first time."""
    memo = _MEMO.get()
    if memo is None:
        return make()
    if key not in memo:
        memo[key] = make()
    result: T = memo[key]
    return result


def remembered(name: str, strategy: LayoutStrategy) -> LayoutStrategy:
    """Layout `strategy` (registered as `name`), its results recalled inside `remembering()` by
    (name, buffers in their order, budget)."""

    def lay_out(buffers: Sequence[Buffer], *, time_budget: float | None = None) -> LayoutResult:
        return recall(
            ("layout", name, tuple(buffers), time_budget),
            lambda: strategy(buffers, time_budget=time_budget),
        )

    return lay_out
