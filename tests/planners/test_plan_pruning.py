"""Planning work skipped without changing a plan: auto's order candidates under a ceiling, the
sharing choices of one order under a ceiling, the planning memo (plan/memo.py), the kernel
ladder's second start made only when reached."""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest

from mcugen import kernel_ladder
from mcugen.plan.buffers import Buffer
from mcugen.plan.layout import LayoutResult
from mcugen.plan.layout.placement import arena_of
from mcugen.plan.memo import Same, recall, remembered, remembering
from mcugen.plan.memory_plan import _lay_out, plan_memory
from mcugen.plan.order import AUTO_CANDIDATES, ORDERS
from testgraphs import inception, nas_cells


def _candidate_orders(graph: Any) -> list[tuple[int, ...]]:
    return [ORDERS[name](graph).order for name in AUTO_CANDIDATES]


@pytest.mark.parametrize("build", [lambda: inception(1, blocks=4), lambda: nas_cells(1, cells=3)])
def test_auto_order_picks_as_if_every_candidate_were_laid_out(build: Any) -> None:
    """Whatever arena each candidate order lays out at (ties included), auto picks the candidate
    of least arena, the earlier on ties, as laying every one out in turn does; and no candidate
    is laid out when its ceiling says it cannot win."""
    graph = build()
    orders = _candidate_orders(graph)
    assert len(set(orders)) == 3  # the three candidates differ on these graphs
    for arenas in product((100, 200, 300), repeat=3):
        arena_of_order = dict(zip(orders, arenas, strict=True))
        laid_out: list[int] = []

        def evaluate(
            order: tuple[int, ...],
            budget: float | None,
            ceiling: int | None = None,
            arena_of_order: dict[tuple[int, ...], int] = arena_of_order,
            laid_out: list[int] = laid_out,
        ) -> tuple[int, int]:
            arena = arena_of_order[order]
            if ceiling is not None and arena >= ceiling:
                return ceiling, ceiling
            laid_out.append(arena)
            return arena, arena

        result = ORDERS["auto"](graph, evaluate=evaluate)
        expected = min(range(3), key=lambda k: (arenas[k], k))
        assert result.order == orders[expected], arenas
        assert result.chosen == AUTO_CANDIDATES[expected]
        assert laid_out[-1] == arenas[expected]


def _buffers(sizes: tuple[int, ...]) -> tuple[Buffer, ...]:
    return tuple(Buffer(i, size, 0, 1) for i, size in enumerate(sizes))


def _stacked(buffers: Any, *, time_budget: float | None = None, gap: int = 0) -> LayoutResult:
    offsets, top = {}, 0
    for b in buffers:
        offsets[b.id], top = top, top + b.size + gap
    return LayoutResult.of("stacked", buffers, offsets)


def test_sharing_choices_under_a_ceiling() -> None:
    """Below its ceiling an order lays out as without one; at or above it, None, and no choice
    peaking at or above the ceiling is laid out."""
    low, high = _buffers((64, 32)), _buffers((160,))
    candidates = ((96, 0, low), (160, 1, high))
    made: list[int] = []

    def layout(buffers: Any, *, time_budget: float | None = None) -> LayoutResult:
        made.append(len(buffers))
        return _stacked(buffers, gap=16)  # the two-buffer choice: 112, above its peak

    free = _lay_out(candidates, 2, layout, None)
    assert free is not None and free.layout.arena == 112
    assert made == [2]  # 160 peaks above 112: never laid out
    assert _lay_out(candidates, 2, layout, None, 113) == free
    made.clear()
    assert _lay_out(candidates, 2, layout, None, 112) is None
    assert _lay_out(candidates, 2, layout, None, 100) is None
    assert made == [2, 2]  # the choice peaking at 160 is never laid out under these ceilings
    made.clear()
    assert _lay_out(candidates, 2, layout, None, 96) is None
    assert made == []


def test_plan_memory_is_the_same_inside_a_memo() -> None:
    graph = nas_cells(1, cells=3)
    plain = plan_memory(graph)
    with remembering():
        first, again = plan_memory(graph), plan_memory(graph)
    for plan in (first, again):
        assert (plan.order, plan.offsets, plan.arena_bytes) == (
            plain.order,
            plain.offsets,
            plain.arena_bytes,
        )


def test_recall_makes_once_per_key_inside_a_block_and_forgets_after() -> None:
    made: list[str] = []

    def make(name: str) -> str:
        made.append(name)
        return name.upper()

    assert recall("a", lambda: make("a")) == "A"
    assert recall("a", lambda: make("a")) == "A"
    assert made == ["a", "a"]  # no block: nothing kept
    made.clear()
    with remembering():
        assert recall("a", lambda: make("a")) == "A"
        with remembering():  # an inner block shares the outer memo
            assert recall("a", lambda: make("a")) == "A"
        assert recall("b", lambda: make("b")) == "B"
    assert made == ["a", "b"]
    with remembering():
        recall("a", lambda: make("a"))
    assert made == ["a", "b", "a"]


def test_same_compares_by_identity() -> None:
    one, other = (1, 2), tuple([1, 2])
    assert one == other and one is not other
    assert Same(one) == Same(one) and hash(Same(one)) == hash(Same(one))
    assert Same(one) != Same(other)


def test_a_remembered_layout_is_made_once_per_buffers_and_budget() -> None:
    calls: list[float | None] = []

    def layout(buffers: Any, *, time_budget: float | None = None) -> LayoutResult:
        calls.append(time_budget)
        return _stacked(buffers)

    lay = remembered("stacked", layout)
    with remembering():
        a = lay(_buffers((16, 32)))
        b = lay(_buffers((16, 32)))
        lay(_buffers((16, 32)), time_budget=1.0)
        lay(_buffers((32, 16)))
    assert a is b and arena_of(_buffers((16, 32)), a.offsets) == 48
    assert calls == [None, 1.0, None]


def test_the_second_ladder_start_is_made_only_when_the_first_is_not_cheap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`reach` takes its starts one at a time: a first start whose search adds at most
    `good_enough` instructions leaves the second unplanned; one that adds more plans it."""
    added = {"first": 5.0, "second": 1.0}
    monkeypatch.setattr(kernel_ladder, "_search", lambda g, lo, o, p, start, b: ({0: start}, start))
    monkeypatch.setattr(kernel_ladder, "_added", lambda g, low, chosen: added[chosen[0]])
    made: list[str] = []

    def starts() -> Any:
        for name in ("first", "second"):
            made.append(name)
            yield name

    nothing: Any = None
    found = kernel_ladder.reach(nothing, {}, nothing, nothing, starts(), set(), 0, 5.0)
    assert found is not None and found[1] == "first" and made == ["first"]
    made.clear()
    found = kernel_ladder.reach(nothing, {}, nothing, nothing, starts(), set(), 0, 2.0)
    assert found is not None and found[1] == "second" and made == ["first", "second"]
