"""The ladder search of kernels chosen for memory (mcugen/kernel_choice.py's module docstring says
how it goes): per layer its kernels from the fastest down (`ladder`), rounds moving the layers
above a bound down their ladders, the largest swapped layers tried back at their fastest kernel,
and, when no round reaches the bound, every layer on its lowest rung (`reach`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from mcugen.codegen.lower import Lowered, lower, registry_key
from mcugen.codegen.lower._variants import variants_for
from mcugen.kernel_costs import added_instructions
from mcugen.model.ir import Graph
from mcugen.model.macs import operator_macs
from mcugen.plan.fit import input_copy_bytes
from mcugen.plan.memory_plan import MemoryPlan

if TYPE_CHECKING:
    from mcugen.options import PlanOptions

#: (graph, kernels, options) -> plan of those kernels, in an order already searched.
Trial = Callable[[Graph, dict[int, Lowered], "PlanOptions"], MemoryPlan]

#: Rounds of moving the layers above the bound one rung down before all go to the reference.
MAX_ROUNDS = 4
#: Rounds after those that move the layers above the bound to their lowest rung at once.
BOTTOM_ROUNDS = 2
#: Swapped layers tried back at their fastest kernel once the bound is met (one plan each).
MAX_RESTORES = 3


def ladder(graph: Graph, op_index: int, fastest: Lowered, core: str) -> tuple[Lowered, ...]:
    """The kernels of one layer from the fastest down, each with less scratch than the one above;
    the last is the reference kernel when it has less scratch than every variant."""
    op = graph.operators[op_index]
    reference = lower(graph, op)
    rungs = [fastest]
    for candidate in variants_for(registry_key(op), core):
        found = candidate.select(graph, op, reference)
        if found is not None and found.scratch_bytes < rungs[-1].scratch_bytes:
            rungs.append(found)
    if reference.scratch_bytes < rungs[-1].scratch_bytes or traits_differ(reference, rungs[-1]):
        rungs.append(reference)
    return tuple(rungs)


def traits_differ(a: Lowered, b: Lowered) -> bool:
    """Whether two kernels of one layer share storage differently (an optimised kernel that runs
    in place with its own scratch, or one that cannot write ahead of its input,
    `Lowered.pixels_in_order`): then the reference may plan smaller even with no less scratch."""
    return a.traits != b.traits or a.pixels_in_order != b.pixels_in_order


def ram_of(graph: Graph, plan: MemoryPlan, options: PlanOptions) -> int:
    """What the choice compares: the arena, plus the runner's input copy where the plan decides
    whether to keep the input (a kept input costs arena, a copy costs RAM beside it)."""
    if options.keep_input != "auto":
        return plan.arena_bytes
    return plan.arena_bytes + input_copy_bytes(graph, plan, "ram")


def reach(
    graph: Graph,
    lowered: dict[int, Lowered],
    options: PlanOptions,
    plan_fn: Trial,
    starts: Iterable[MemoryPlan],
    laddered: set[int],
    bound: int,
    good_enough: float = 0.0,
) -> tuple[dict[int, Lowered], MemoryPlan] | None:
    """Kernels and plan at `bound`: the ladder search from each of the fastest kernels' plans
    `starts` (the layers above the bound differ with the order; taken one at a time, so a start
    not reached is never planned) until one adds at most `good_enough` estimated instructions,
    the cheapest found; else every laddered layer on its
    lowest rung (the reference kernel only where it shares storage as no variant does: the
    reference kernels' memory at a fraction of their cost); None when nothing reaches it."""
    found: list[tuple[dict[int, Lowered], MemoryPlan]] = []
    for start in starts:
        result = _search(graph, lowered, options, plan_fn, start, bound)
        if result is not None:
            found.append(result)
            if _added(graph, lowered, result[0]) <= good_enough:
                break  # cheap enough: the next start's search (a few plans) is not made
    if found:
        return min(found, key=lambda f: _added(graph, lowered, f[0]))
    chosen = {**lowered, **{i: ladder(graph, i, lowered[i], options.core)[-1] for i in laddered}}
    plan = plan_fn(graph, chosen, options)
    return (chosen, plan) if ram_of(graph, plan, options) <= bound else None


def _added(graph: Graph, lowered: dict[int, Lowered], chosen: dict[int, Lowered]) -> float:
    """Estimated instructions `chosen` adds to `lowered` (a kernel of no measured rate: inf)."""
    total = 0.0
    for i, low in chosen.items():
        if low is not lowered[i]:
            extra = added_instructions(graph, i, lowered[i], low)
            total += float("inf") if extra is None else extra
    return total


def _search(
    graph: Graph,
    lowered: dict[int, Lowered],
    options: PlanOptions,
    plan_fn: Trial,
    fastest: MemoryPlan,
    bound: int,
) -> tuple[dict[int, Lowered], MemoryPlan] | None:
    """The first guess from the `fastest` kernels' plan, then layers moved down their ladders
    round by round until the plan is at `bound`, then the largest tried back at their fastest
    kernel; None when `MAX_ROUNDS` do not reach the bound."""
    ladders: dict[int, tuple[Lowered, ...]] = {}

    def ladder_of(op: int) -> tuple[Lowered, ...]:
        if op not in ladders:
            ladders[op] = ladder(graph, op, lowered[op], options.core)
        return ladders[op]

    laddered = {i for i, low in lowered.items() if low.variant != "reference"}
    rung = _first_guess(fastest, lowered, laddered, ladder_of, bound)
    chosen = {**lowered, **{i: ladder_of(i)[k] for i, k in rung.items()}}
    for round_ in range(MAX_ROUNDS + BOTTOM_ROUNDS):
        plan = plan_fn(graph, chosen, options)
        if ram_of(graph, plan, options) <= bound:
            return _restored(graph, lowered, options, plan_fn, chosen, plan, bound, ladder_of)
        moved = False
        for i in _at_peak(plan, bound):
            last = len(ladder_of(i)) - 1 if i in laddered else 0
            # one rung a round, then (a layer whose lowest rung shares storage as no rung above
            # does, `_traits_differ`, can need it) straight to the lowest
            step_to = min(rung.get(i, 0) + 1, last) if round_ < MAX_ROUNDS else last
            if step_to > rung.get(i, 0):
                rung[i] = step_to
                chosen[i] = ladder_of(i)[step_to]
                moved = True
        if not moved:
            return None
    return None


def _first_guess(
    plan: MemoryPlan,
    lowered: dict[int, Lowered],
    laddered: set[int],
    ladder_of: Callable[[int], tuple[Lowered, ...]],
    bound: int,
) -> dict[int, int]:
    """Per layer at a step of `plan` above `bound`, the fastest rung whose scratch fits under
    the bound there (the bytes live at its step without its own scratch)."""
    live = plan.live_bytes
    rung = {}
    for step, op in enumerate(plan.order):
        if op not in laddered or live[step + 1] <= bound:
            continue
        base = live[step + 1] - lowered[op].scratch_bytes
        rungs = ladder_of(op)
        fitting = [k for k, low in enumerate(rungs) if base + low.scratch_bytes <= bound]
        rung[op] = fitting[0] if fitting else len(rungs) - 1
    return {op: k for op, k in rung.items() if k}


def _at_peak(plan: MemoryPlan, bound: int) -> list[int]:
    """The operators running at a step whose live bytes exceed `bound`, or when none does (the
    layout, not the live bytes, is above it), those at the plan's peak steps."""
    live = plan.live_bytes
    over = [op for step, op in enumerate(plan.order) if live[step + 1] > bound]
    if over:
        return over
    peak = max(live, default=0)
    return [op for step, op in enumerate(plan.order) if live[step + 1] == peak]


def _restored(
    graph: Graph,
    lowered: dict[int, Lowered],
    options: PlanOptions,
    plan_fn: Trial,
    chosen: dict[int, Lowered],
    plan: MemoryPlan,
    bound: int,
    ladder_of: Callable[[int], tuple[Lowered, ...]],
) -> tuple[dict[int, Lowered], MemoryPlan]:
    """`chosen` with the swapped layers of most MACs back at their fastest kernel wherever the
    arena stays at `bound` (at most `MAX_RESTORES` plans), then `_stepped_up`."""
    swapped = [i for i in chosen if chosen[i] is not lowered[i]]
    if len(swapped) < 2:
        return _stepped_up(graph, lowered, options, plan_fn, chosen, plan, bound, ladder_of)
    swapped.sort(key=lambda i: (-operator_macs(graph, graph.operators[i]), i))
    for i in swapped[:MAX_RESTORES]:
        trial = {**chosen, i: lowered[i]}
        trial_plan = plan_fn(graph, trial, options)
        if ram_of(graph, trial_plan, options) <= bound:
            chosen, plan = trial, trial_plan
    return _stepped_up(graph, lowered, options, plan_fn, chosen, plan, bound, ladder_of)


def _stepped_up(
    graph: Graph,
    lowered: dict[int, Lowered],
    options: PlanOptions,
    plan_fn: Trial,
    chosen: dict[int, Lowered],
    plan: MemoryPlan,
    bound: int,
    ladder_of: Callable[[int], tuple[Lowered, ...]],
) -> tuple[dict[int, Lowered], MemoryPlan]:
    """`chosen` with every layer at the bottom of its ladder one rung up at once (one plan; the
    rung above is not the fastest, which `_restored` tried), kept when the arena stays at
    `bound`: the rounds move every layer at the peak down, some below a rung that fits, and the
    bottom rung is not always the smallest (the lean depthwise kernel in place needs the
    reference's staging, a channel plane, where the ring kernel above it needs less scratch and
    no staging)."""
    trial = dict(chosen)
    for i, low in chosen.items():
        rungs = ladder_of(i) if low is not lowered[i] else ()
        if len(rungs) > 2 and low is rungs[-1]:
            trial[i] = rungs[-2]
    if trial == chosen:
        return chosen, plan
    trial_plan = plan_fn(graph, trial, options)
    if ram_of(graph, trial_plan, options) <= bound:
        return trial, trial_plan
    return chosen, plan
