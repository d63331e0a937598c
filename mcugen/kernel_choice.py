"""Kernels chosen for memory as well as speed (issue 34 item 1).

An optimised kernel's scratch (im2col columns, widened weights, a depthwise band) lives in the
arena while its layer runs. Where that layer is at the arena's peak, the scratch raises the arena
above what TFLM's reference kernels would need: randwire_er24 plans 53,856 B with the fastest
kernels against 49,408 B with the reference ones. The policy (`PlanOptions.kernels`):

- "opt": every layer its fastest kernel, whatever its scratch;
- "memory": the fastest kernels that keep the arena at or below the reference kernels' arena;
- "auto" (default): where a board is given and the fastest kernels' plan does not fit its RAM,
  "memory" whatever it costs (and after it, a patch stage if it still does not fit); otherwise
  "memory"'s kernels only when their estimated cost (per-MAC rates measured on the M4 twin,
  `PER_MAC`) is at most `CHEAP_SHARE` of the model's estimated instructions, else "opt". With
  the small-scratch rungs (1x1 staged and direct, convolution windows of bytes, the ring
  depthwise) the memory choice costs randwire_er24 +6.7 % instructions on the F767 twin for
  4,480 B of arena, and KWS +50 % for 1,008 B: auto takes the first and leaves the second;
- "reference": the reference kernels only.

The search. Each layer has a ladder of kernels: the variants that take it, fastest first, then the
reference kernel, keeping only rungs with less scratch than the rung above (a slower kernel with as
much scratch never helps). In the fastest kernels' plan, a layer at a step above the bound takes
the fastest rung whose scratch, added to the bytes live at its step without its own, stays within
the bound. That guess is planned (order and layout searched again); while its arena is above the
bound, each round moves every layer that runs at a step above the bound (or, once no step is, at
the plan's peak) one rung down and plans again. Once at the bound, the swapped layers with the
most MACs are tried back at their fastest kernel, one plan each (`MAX_RESTORES`), and stay fast
where the arena stays at the bound; then the layers left at the bottom of their ladder go one
rung up together (one plan), kept where the arena stays at the bound. After `MAX_ROUNDS` rounds
without reaching the bound, every laddered layer runs its reference kernel, which plans exactly
the bound. The work is a few plans whatever the model, so the choice is the same on any
machine."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from mcugen.codegen.lower import Lowered, lower, registry_key
from mcugen.codegen.lower._variants import variants_for
from mcugen.kernel_costs import added_instructions, estimated_instructions
from mcugen.model.ir import Graph
from mcugen.model.macs import operator_macs
from mcugen.plan.fit import input_copy_bytes
from mcugen.plan.kernel_swaps import KernelChoice, KernelSwap
from mcugen.plan.memory_plan import MemoryPlan

if TYPE_CHECKING:
    from mcugen.options import PlanOptions

#: (graph, kernels, options, order or None: search one) -> plan, as the pipeline plans.
PlanFn = Callable[[Graph, dict[int, Lowered], "PlanOptions", "tuple[int, ...] | None"], MemoryPlan]
#: (graph, kernels, options) -> plan of those kernels, in an order already searched.
Trial = Callable[[Graph, dict[int, Lowered], "PlanOptions"], MemoryPlan]
#: (graph, kernels, options, order) -> no plan in that order needs less than this of `ram_of`.
FloorFn = Callable[[Graph, dict[int, Lowered], "PlanOptions", tuple[int, ...]], int]

#: `auto` takes the memory choice where the board does not need it when its estimated cost is
#: at most this share of the model's estimated instructions (`estimated_instructions`):
#: randwire_er24 on the F767 twin, +6.7 % measured for 6,656 B of RAM, is taken; KWS, +50 %
#: for 1,008 B, is left to --kernels memory. X-CUBE-AI's "balanced" optimisation in spirit.
CHEAP_SHARE = 0.10

#: Rounds of moving the layers above the bound one rung down before all go to the reference.
MAX_ROUNDS = 4
#: Swapped layers tried back at their fastest kernel once the bound is met (one plan each).
MAX_RESTORES = 3


def _layout_tied(graph: Graph, lowered: dict[int, Lowered]) -> set[int]:
    """Layers whose kernel lays out a constant others read too (a patch stage's tiles): kept."""
    readers = graph.consumers()
    return {i for i, low in lowered.items() if any(len(readers[t]) > 1 for t, _ in low.constants)}


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
    if reference.scratch_bytes < rungs[-1].scratch_bytes or _traits_differ(reference, rungs[-1]):
        rungs.append(reference)
    return tuple(rungs)


def _traits_differ(a: Lowered, b: Lowered) -> bool:
    """Whether two kernels of one layer share storage differently (an optimised kernel that runs
    in place with its own scratch): then the reference may plan smaller even with no less
    scratch."""
    return a.traits != b.traits


def ram_of(graph: Graph, plan: MemoryPlan, options: PlanOptions) -> int:
    """What the choice compares: the arena, plus the runner's input copy where the plan decides
    whether to keep the input (a kept input costs arena, a copy costs RAM beside it)."""
    if options.keep_input != "auto":
        return plan.arena_bytes
    return plan.arena_bytes + input_copy_bytes(graph, plan, "ram")


def choose_kernels(
    graph: Graph,
    lowered: dict[int, Lowered],
    options: PlanOptions,
    plan_fn: PlanFn,
    fits: Callable[[MemoryPlan], bool | None],
    floor_fn: FloorFn,
) -> tuple[dict[int, Lowered], MemoryPlan]:
    """The kernels and plan of `graph` under `options.kernels` (module docstring); `lowered` are
    the fastest kernels, `plan_fn` plans as the pipeline does, `fits` says whether a plan fits
    the board's RAM (None without a board), `floor_fn` bounds a plan from below without laying
    it out (trials above the bound are rejected on it)."""
    start = time.perf_counter()
    fastest = plan_fn(graph, lowered, options, None)
    if options.kernels not in ("auto", "memory"):
        return lowered, fastest
    fastest_ram = ram_of(graph, fastest, options)
    tied = _layout_tied(graph, lowered)
    laddered = {i for i, low in lowered.items() if low.variant != "reference" and i not in tied}
    if not laddered:
        return lowered, fastest
    # auto: where the board takes the fastest kernels (or without a board), memory's choice
    # only when it is cheap (`CHEAP_SHARE`); where it does not, memory's whatever it costs
    balanced = options.kernels == "auto" and fits(fastest) is not False
    if not _scratch_at_peak(graph, fastest, lowered, laddered):
        choice = KernelChoice(
            options.kernels, fastest_ram, 0, kept_because="no layer's scratch at the peak"
        )
        return lowered, replace(
            fastest, kernel_choice=choice, plan_seconds=time.perf_counter() - start
        )
    references = {i: lower(graph, graph.operators[i]) for i in sorted(laddered)}
    # the reference plan gets the whole budget: with a quarter of it (auto's choice, to save
    # time) randwire_ws32_s7 found 53,504 B for 49,408 and kept its fastest kernels above it
    bottom = plan_fn(graph, {**lowered, **references}, options, None)
    bound = ram_of(graph, bottom, options)
    if fastest_ram <= bound:
        choice = KernelChoice(
            options.kernels,
            fastest_ram,
            bound,
            kept_because="no larger than the reference kernels'",
        )
        return lowered, replace(
            fastest, kernel_choice=choice, plan_seconds=time.perf_counter() - start
        )
    trial = _in_known_orders(plan_fn, floor_fn, (bottom, fastest), bound)
    found = _search(graph, lowered, options, trial, fastest, bound)
    if found is None:
        chosen, plan = {**lowered, **references}, bottom
    else:
        chosen, plan = found
    swaps = tuple(
        KernelSwap(
            op=i,
            opcode=graph.operators[i].opcode,
            fastest=lowered[i].variant,
            chosen=chosen[i].variant,
            fastest_scratch=lowered[i].scratch_bytes,
            chosen_scratch=chosen[i].scratch_bytes,
            macs=operator_macs(graph, graph.operators[i]),
            added_instructions=added_instructions(graph, i, lowered[i], chosen[i]),
        )
        for i in sorted(lowered)
        if chosen[i] is not lowered[i]
    )
    if balanced:
        declined = _too_dear(graph, lowered, swaps, fastest_ram - ram_of(graph, plan, options))
        if declined:
            choice = KernelChoice(options.kernels, fastest_ram, bound, kept_because=declined)
            return lowered, replace(
                fastest, kernel_choice=choice, plan_seconds=time.perf_counter() - start
            )
    return chosen, replace(
        plan,
        kernel_choice=KernelChoice(options.kernels, fastest_ram, bound, swaps),
        plan_seconds=time.perf_counter() - start,
    )


def _too_dear(
    graph: Graph, lowered: dict[int, Lowered], swaps: tuple[KernelSwap, ...], saved: int
) -> str:
    """Why `auto` keeps the fastest kernels rather than `swaps` (empty: it takes them): their
    estimated cost is above `CHEAP_SHARE` of the model's, or a kernel has no measured rate."""
    if any(s.added_instructions is None for s in swaps):
        return (
            f"--kernels memory saves {saved:,} bytes with kernels of no measured speed "
            "(auto takes kernels with less scratch only when they cost little)"
        )
    added = sum(s.added_instructions or 0 for s in swaps)
    total = estimated_instructions(graph, lowered)
    if added <= CHEAP_SHARE * total:
        return ""
    share = f" ({100 * added / total:.0f} % of the model's, estimated)" if total else ""
    return (
        f"--kernels memory saves {saved:,} bytes for about +{added:,} instructions per "
        f"inference{share}; auto takes kernels with less scratch when they cost at most "
        f"{100 * CHEAP_SHARE:.0f} %"
    )


def _scratch_at_peak(
    graph: Graph, plan: MemoryPlan, lowered: dict[int, Lowered], laddered: set[int]
) -> bool:
    """Whether another kernel could lower `plan`'s arena in its order: the layout is above the
    order's live peak, or a step at the peak runs a layer whose reference kernel has less scratch
    or shares storage otherwise. When not, the reference kernels' plan (a second order search)
    is not made: in this order they peak at the same bytes. (Another order could still suit them
    better; benchmarks/memory_bar.py checks every model against their own plan.)"""
    live = plan.live_bytes
    peak = max(live, default=0)
    if plan.arena_bytes > peak:
        return True
    for step, op in enumerate(plan.order):
        if live[step + 1] != peak or op not in laddered:
            continue
        reference = lower(graph, graph.operators[op])
        if reference.scratch_bytes < lowered[op].scratch_bytes:
            return True
        if _traits_differ(reference, lowered[op]):
            return True
    return False


def _in_known_orders(
    plan_fn: PlanFn,
    floor_fn: FloorFn,
    known: tuple[MemoryPlan, ...],
    bound: int,
) -> Trial:
    """Plans of other kernels laid out in the orders the `known` plans searched (no new order
    search): the first at or below `bound`, else the smallest laid out (ties: the first), else,
    when every order's floor (peak live bytes) is above `bound`, the order with the lowest floor
    laid out (a layout each: the rest are rejected on their floors); each keeps the label of
    the plan whose order it took."""

    def laid_out(
        g: Graph, chosen: dict[int, Lowered], opts: PlanOptions, origin: MemoryPlan
    ) -> MemoryPlan:
        plan = plan_fn(g, chosen, opts, origin.order)
        return replace(plan, order_strategy=origin.order_strategy)

    def planned(g: Graph, chosen: dict[int, Lowered], opts: PlanOptions) -> MemoryPlan:
        floors = [floor_fn(g, chosen, opts, origin.order) for origin in known]
        best: MemoryPlan | None = None
        for origin, floor in zip(known, floors, strict=True):
            if floor > bound:
                continue
            plan = laid_out(g, chosen, opts, origin)
            if ram_of(g, plan, opts) <= bound:
                return plan
            if best is None or ram_of(g, plan, opts) < ram_of(g, best, opts):
                best = plan
        if best is None:
            best = laid_out(g, chosen, opts, known[floors.index(min(floors))])
        return best

    return planned


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
    for _ in range(MAX_ROUNDS):
        plan = plan_fn(graph, chosen, options)
        if ram_of(graph, plan, options) <= bound:
            return _restored(graph, lowered, options, plan_fn, chosen, plan, bound, ladder_of)
        moved = False
        for i in _at_peak(plan, bound):
            if i in laddered and rung.get(i, 0) + 1 < len(ladder_of(i)):
                rung[i] = rung.get(i, 0) + 1
                chosen[i] = ladder_of(i)[rung[i]]
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
