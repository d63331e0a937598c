"""Run the registered order and layout strategies side by side on one graph.

The set of pairs is bounded (every order with the default layout, every layout with the default
order, plus any pairs asked for), so it stays linear in the size of the registries while every
registered strategy appears. New strategies show up as soon as they register.

Each pair is planned by one function of (order, layout) -> plan: `plan_memory` on the graph by
default, or the caller's (`mcugen plan` passes the whole pipeline with the user's other options,
so a row is exactly what `mcugen plan --order X --layout Y` plans).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

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
    arena_lower_bound: int = 0  # proven: no plan of the graph has a smaller arena
    unshared_order_bound: int = 0  # proven: no order peaks lower when nothing is shared
    plan_seconds: float = 0.0
    unshared_order_optimal: bool = False  # this order's unshared peak is that bound
    note: str = ""
    error: str = ""
    chosen: bool = False  # the pair of the plan the report is about
    #: RAM the firmware's runner takes for a copy of the input, outside the arena (0 when the
    #: plan keeps the input in place, or without a board): a kept input costs arena instead.
    input_copy_bytes: int = 0

    @property
    def arena_and_copy(self) -> int:
        """What the default choice minimises: the arena and the input's copy outside it."""
        return self.arena_bytes + self.input_copy_bytes

    @property
    def layout_gap(self) -> int:
        return self.arena_bytes - self.peak_live_bytes

    @property
    def bound_gap(self) -> int:
        """Bytes above `arena_lower_bound`, never negative (MemoryPlan.validate)."""
        return self.arena_bytes - self.arena_lower_bound

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


#: Plans one (order, layout) pair.
PlanPair = Callable[[str, str], MemoryPlan]


def run_pair(
    graph: Graph,
    order: str,
    layout: str,
    *,
    scratch: Mapping[int, int] | None = None,
    time_budget: float | None = None,
    traits: Traits | None = None,
    plan_pair: PlanPair | None = None,
) -> tuple[StrategyRun, MemoryPlan | None]:
    """Plan `graph` with one pair; a failing strategy gives a run with `error`, not an exception.
    With `plan_pair`, that plans it; else `plan_memory` with storage shared as the operators'
    `traits` allow (None: nothing shared), and TFLM's baseline pair never shares."""
    start = time.perf_counter()
    try:
        if plan_pair is not None:
            plan = plan_pair(order, layout)
        else:
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
    return run_of(plan, order, layout, seconds=time.perf_counter() - start), plan


def run_of(
    plan: MemoryPlan,
    order: str = "",
    layout: str = "",
    *,
    seconds: float | None = None,
    chosen: bool = False,
) -> StrategyRun:
    """The row of `plan`, planned for the pair (`order`, `layout`): by default the names of its
    strategies, a joint-search plan ("auto(greedy)") under "auto" with the order it chose in the
    note, so that the row can be re-run by name."""
    name, _, picked = plan.order_strategy.partition("(")
    tiled = plan.patches is not None and plan.patches.stage is not None  # planned "stored"
    if not picked and order == "auto" and name != order and not tiled:
        picked = name  # the order paging chose (pipeline._paging_order names the candidate)
    picked = picked.rstrip(")")
    note = "; ".join(n for n in (f"chose {picked}" if picked else "", plan.note) if n)
    return StrategyRun(
        order=order or name,
        layout=layout or plan.layout_strategy,
        arena_bytes=plan.arena_bytes,
        peak_live_bytes=plan.lower_bound,
        arena_lower_bound=plan.arena_lower_bound,
        unshared_order_bound=plan.unshared_order_bound,
        plan_seconds=plan.plan_seconds if seconds is None else seconds,
        unshared_order_optimal=plan.unshared_order_optimal,
        note=note,
        chosen=chosen,
    )


def compare_strategies(
    graph: Graph,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    scratch: Mapping[int, int] | None = None,
    time_budget: float | None = None,
    known: Sequence[MemoryPlan] | Mapping[tuple[str, str], MemoryPlan] = (),
    traits: Traits | None = None,
    plan_pair: PlanPair | None = None,
    chosen: tuple[str, str] | None = None,
) -> tuple[StrategyRun, ...]:
    """One run per pair (default `strategy_pairs()`, with the pairs of `known`); plans in `known`
    are reused, not re-run: a mapping gives each its pair, a sequence names it by its strategies
    (a joint-search plan "auto(stored)" stands for the pair ("auto", layout)). Pairs are planned
    by `plan_pair` when given (see `run_pair`). The row of `chosen` is marked."""
    if isinstance(known, Mapping):
        done = dict(known)
    else:
        done = {(p.order_strategy.split("(")[0], p.layout_strategy): p for p in known}
    runs = []
    for order, layout in pairs if pairs is not None else strategy_pairs(done):
        if (order, layout) in done:
            run = run_of(done[(order, layout)], order, layout)
        else:
            run, _ = run_pair(
                graph,
                order,
                layout,
                scratch=scratch,
                time_budget=time_budget,
                traits=traits,
                plan_pair=plan_pair,
            )
        runs.append(replace(run, chosen=(order, layout) == chosen))
    return tuple(runs)


def best_run(runs: Iterable[StrategyRun]) -> StrategyRun | None:
    """The smallest arena with the input's copy; ties go to the earliest run (deterministic,
    unlike planning time)."""
    ok = [(r.arena_and_copy, i, r) for i, r in enumerate(runs) if not r.error]
    return min(ok, key=lambda e: (e[0], e[1]))[2] if ok else None


def _one_line(exc: Exception) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."
