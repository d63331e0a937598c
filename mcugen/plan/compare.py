"""Run the registered order and layout strategies side by side on one graph.

The set of pairs is bounded (every order with the default layout, every layout with the default
order, plus any pairs asked for), so it stays linear in the size of the registries while every
registered strategy appears. New strategies show up as soon as they register.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mcugen.model.ir import Graph
from mcugen.model.traits import Traits
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan.memory_plan import MemoryPlan, plan_memory


@dataclass(frozen=True)
class StrategyRun:
    """One order/layout pair on one graph; `error` is set (and the figures are 0) if it failed."""

    order: str
    layout: str
    arena_bytes: int = 0
    peak_live_bytes: int = 0  # of this order: no layout of it is smaller
    order_lower_bound: int = 0  # proven: no order of the graph has a smaller peak
    plan_seconds: float = 0.0
    proven_optimal: bool = False
    note: str = ""
    error: str = ""

    @property
    def layout_gap(self) -> int:
        return self.arena_bytes - self.peak_live_bytes

    @property
    def bound_gap(self) -> int:
        return self.arena_bytes - self.order_lower_bound

    @property
    def at_lower_bound(self) -> bool:
        return not self.error and self.arena_bytes == self.peak_live_bytes


#: TFLM's own plan: the stored order laid out greedy by size (mcugen reproduces it exactly).
TFLM_BASELINE = ("stored", "greedy_by_size")


def strategy_pairs(extra: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """The default pair, TFLM's baseline, every order with the default layout, every layout
    with the default order, then `extra`; each pair once, in that order (names sorted)."""
    pairs = [(orders.DEFAULT, layouts.DEFAULT)]
    if TFLM_BASELINE[0] in orders.ORDERS and TFLM_BASELINE[1] in layouts.LAYOUTS:
        pairs.append(TFLM_BASELINE)
    pairs += [(o, layouts.DEFAULT) for o in sorted(orders.ORDERS)]
    pairs += [(orders.DEFAULT, lay) for lay in sorted(layouts.LAYOUTS)]
    pairs += list(extra)
    return list(dict.fromkeys(pairs))


def run_pair(
    graph: Graph,
    order: str,
    layout: str,
    *,
    scratch: Mapping[int, int] | None = None,
    time_budget: float | None = None,
    traits: Traits | None = None,
) -> tuple[StrategyRun, MemoryPlan | None]:
    """Plan `graph` with one pair; a failing strategy gives a run with `error`, not an exception.
    Storage is shared as the operators' `traits` allow (None: nothing shared); TFLM's baseline
    pair never shares."""
    start = time.perf_counter()
    try:
        plan = plan_memory(
            graph,
            order=order,
            layout=layout,
            scratch=scratch,
            time_budget=time_budget,
            in_place=traits is not None and (order, layout) != TFLM_BASELINE,
            traits=traits,
        )
    except Exception as exc:  # one strategy's bug must not hide the others' results
        seconds = time.perf_counter() - start
        return StrategyRun(order, layout, plan_seconds=seconds, error=_one_line(exc)), None
    return run_of(plan), plan


def run_of(plan: MemoryPlan) -> StrategyRun:
    """A joint-search plan ("auto(greedy)") is reported under its strategy name, "auto", with
    the order it chose in the note, so that the row can be re-run by name."""
    order, _, chosen = plan.order_strategy.partition("(")
    note = "; ".join(n for n in (f"chose {chosen.rstrip(')')}" if chosen else "", plan.note) if n)
    return StrategyRun(
        order=order,
        layout=plan.layout_strategy,
        arena_bytes=plan.arena_bytes,
        peak_live_bytes=plan.lower_bound,
        order_lower_bound=plan.order_lower_bound,
        plan_seconds=plan.plan_seconds,
        proven_optimal=plan.order_proven_optimal,
        note=note,
    )


def compare_strategies(
    graph: Graph,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    scratch: Mapping[int, int] | None = None,
    time_budget: float | None = None,
    known: Sequence[MemoryPlan] = (),
    traits: Traits | None = None,
) -> tuple[StrategyRun, ...]:
    """One run per pair (default `strategy_pairs()`); plans in `known` are reused, not re-run.
    A known plan of the joint search ("auto(stored)") stands for the pair ("auto", layout)."""
    done = {(p.order_strategy.split("(")[0], p.layout_strategy): p for p in known}
    runs = []
    for order, layout in pairs if pairs is not None else strategy_pairs(done):
        if (order, layout) in done:
            runs.append(run_of(done[(order, layout)]))
        else:
            run, _ = run_pair(
                graph, order, layout, scratch=scratch, time_budget=time_budget, traits=traits
            )
            runs.append(run)
    return tuple(runs)


def best_run(runs: Iterable[StrategyRun]) -> StrategyRun | None:
    """The smallest arena; ties go to the earliest run (deterministic, unlike planning time)."""
    ok = [(r.arena_bytes, i, r) for i, r in enumerate(runs) if not r.error]
    return min(ok, key=lambda e: (e[0], e[1]))[2] if ok else None


def _one_line(exc: Exception) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."
