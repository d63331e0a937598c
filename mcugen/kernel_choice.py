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
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from mcugen.codegen.lower import Lowered, lower
from mcugen.kernel_costs import added_instructions, estimated_instructions
from mcugen.kernel_ladder import Trial, ram_of, reach, traits_differ
from mcugen.kernel_ladder import ladder as ladder  # re-exported: tests and benchmarks use it
from mcugen.model.ir import Graph
from mcugen.model.macs import operator_macs
from mcugen.plan.kernel_swaps import KernelChoice, KernelSwap
from mcugen.plan.memory_plan import MemoryPlan

if TYPE_CHECKING:
    from mcugen.options import PlanOptions

#: (graph, kernels, options, order or None: search one) -> plan, as the pipeline plans.
PlanFn = Callable[[Graph, dict[int, Lowered], "PlanOptions", "tuple[int, ...] | None"], MemoryPlan]
#: (graph, kernels, options, order) -> no plan in that order needs less than this of `ram_of`.
FloorFn = Callable[[Graph, dict[int, Lowered], "PlanOptions", tuple[int, ...]], int]

#: `auto` takes the memory choice where the board does not need it when its estimated cost is
#: at most this share of the model's estimated instructions (`estimated_instructions`):
#: randwire_er24 on the F767 twin, +6.7 % measured for 6,656 B of RAM, is taken; KWS, +50 %
#: for 1,008 B, is left to --kernels memory. X-CUBE-AI's "balanced" optimisation in spirit.
CHEAP_SHARE = 0.10


def _layout_tied(graph: Graph, lowered: dict[int, Lowered]) -> set[int]:
    """Layers whose kernel lays out a constant others read too (a patch stage's tiles): kept."""
    readers = graph.consumers()
    return {i for i, low in lowered.items() if any(len(readers[t]) > 1 for t, _ in low.constants)}


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
    # the search starts from the fastest kernels in their own order and in the reference
    # kernels' order, where other layers may be at the peak: that plan is made only when the
    # first start's search finds nothing cheap enough
    cheap = CHEAP_SHARE * estimated_instructions(graph, lowered)
    reference_order = bottom.order

    def starts() -> Iterator[MemoryPlan]:
        yield fastest
        yield plan_fn(graph, lowered, options, reference_order)

    found = reach(graph, lowered, options, trial, starts(), laddered, bound, cheap)
    chosen, plan = found or ({**lowered, **references}, bottom)
    swaps = _swaps(graph, lowered, chosen)
    if balanced:
        declined = _too_dear(graph, lowered, swaps, fastest_ram - ram_of(graph, plan, options))
        # too dear for the bound in the reference kernels' own order: the bound in the fastest
        # plan's order may take fewer swaps (what `--order <that strategy>` would find)
        near = None
        if declined:
            bottom = plan_fn(graph, {**lowered, **references}, options, fastest.order)
            bound = min(ram_of(graph, bottom, options), fastest_ram)
            trial = _in_known_orders(plan_fn, floor_fn, (bottom, fastest), bound)
            near = reach(graph, lowered, options, trial, (fastest,), laddered, bound)
        if near is not None:
            chosen, plan = near
            swaps = _swaps(graph, lowered, chosen)
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


def _swaps(
    graph: Graph, lowered: dict[int, Lowered], chosen: dict[int, Lowered]
) -> tuple[KernelSwap, ...]:
    return tuple(
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
        f"--kernels memory saves {saved:,} bytes for about {added:+,} instructions per "
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
        if traits_differ(reference, lowered[op]):
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
        floors: list[int] = []  # each order's floor taken when it is reached
        best: MemoryPlan | None = None
        for origin in known:
            floors.append(floor_fn(g, chosen, opts, origin.order))
            if floors[-1] > bound:
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
