"""The memory plan of one graph: operator order, buffers, offsets, and the gap to optimal.

`plan_memory` chooses an order by name (plan/order), lets tensors share storage as the operators'
traits allow for that order (plan/aliasing.py), lays the buffers out by name (plan/layout) and
validates the result. The order strategy may evaluate candidate orders through the same sharing and
layout (`auto`, the joint search: the order is chosen for the arena it leads to, not only for its
live bytes). Complexity: the order search plus one layout per distinct sharing choice per
evaluated order; weaknesses are those of the strategies chosen.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from mcugen.model.ir import Graph
from mcugen.model.traits import NO_TRAITS, Traits
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan.bounds import arena_lower_bound
from mcugen.plan.buffers import (
    Buffer,
    live_bytes_per_step,
    op_working_set_bound,
)
from mcugen.plan.channel_slices import ChannelSlice, planned_slices, slice_order
from mcugen.plan.kernel_swaps import KernelChoice
from mcugen.plan.layout import LayoutResult, LayoutStrategy
from mcugen.plan.memo import remembered
from mcugen.plan.persistent import PersistentLayout, persistent_layout
from mcugen.plan.sharing_check import PlanInvalid, check_sharing
from mcugen.plan.sharing_choices import Choice, sharing_candidates
from mcugen.plan.stage_overlap import WindowOrderViolated, check_window_order
from mcugen.plan.weight_staging import StagedWeights, check_staged

if TYPE_CHECKING:
    from mcugen.plan.paging.target import PagingPlan
    from mcugen.plan.patches import PatchPlan
    from mcugen.plan.pools import PoolPlan

Aliases = Mapping[int, tuple[int, int]]


@dataclass(frozen=True)
class MemoryPlan:
    order: tuple[int, ...]
    buffers: tuple[Buffer, ...]
    offsets: Mapping[int, int]  # buffer id -> byte offset
    order_strategy: str
    layout_strategy: str
    plan_seconds: float = 0.0
    #: No order of this graph peaks below this when no two tensors share bytes (what the order
    #: strategies prove; `--order optimal` minimises that peak). Sharing goes below it, so it
    #: bounds no plan that shares: `arena_lower_bound` does.
    unshared_order_bound: int = 0
    unshared_order_optimal: bool = False  # this order's unshared peak is that bound
    #: No plan of this graph (any order, the sharing its operators allow, any layout) has a
    #: smaller arena (plan/bounds.py); `validate` checks the arena is not below it.
    arena_lower_bound: int = 0
    note: str = ""
    layout_chosen: str = ""  # the strategy whose layout was kept (auto: one of its steps)
    layout_proven_optimal: bool = False  # no layout of these buffers is smaller
    #: The variable tensors, outside the arena: alive across invokes (plan/persistent.py).
    persistent: PersistentLayout = field(default_factory=PersistentLayout)
    #: Input 0 stays intact through the inference (pipeline.PlanOptions.keep_input): the MLPerf
    #: runner loads it in place, and the firmware needs no copy of it.
    input_kept: bool = False
    #: RAM that keeping it saves: the runner's copy, less the arena it adds (0 when not kept).
    input_kept_saving: int = 0
    #: The buffers' pools (plan/pools): None without a board's memories or with a dynamic
    #: allocator; one pool when the arena fits the fastest memory. `offsets` above stay the
    #: single-arena layout; a split plan's firmware addresses each buffer in its pool.
    pools: PoolPlan | None = None
    pools_error: str = ""  # why no arrangement of the memories holds the buffers ("" if one does)
    #: The buffers paged between the board's fast and slow memory (plan/paging): None unless
    #: the arena does not fit the fast memory or `--ram-budget` caps it. `offsets` above stay
    #: the single-arena layout (what everything in fast memory would take).
    paging: PagingPlan | None = None
    #: The patch-stage search (plan/patches) when it ran: its `stage` is the one this plan runs
    #: (None: every candidate planned larger than the graph run whole), and the arena of the
    #: graph run whole, which the stage is judged against.
    patches: PatchPlan | None = None
    arena_without_patches: int = 0
    #: Stages found after the first, on the graph tiled so far (mcugen/patching.py), each with
    #: the arena before and once it runs; their operators are the model's operator indices.
    later_patches: tuple[tuple[PatchPlan, int, int], ...] = ()
    #: the model's operators before the patch stage's tiles replaced some (0: no search ran)
    model_operators: int = 0
    #: Weights copied from flash into free arena bytes before the operators that re-read them
    #: (plan/weight_staging.py, `--stage-weights auto`): each lives at its operator's step only,
    #: in a gap of the buffers live there, so the arena is what it is without them.
    staged: tuple[StagedWeights, ...] = ()
    #: "" when staging was not asked for; else "auto", or why it did not run ("paged plan").
    staging: str = ""
    #: What choosing kernels for memory did (mcugen/kernel_choice.py); None when the policy
    #: did not weigh them (`--kernels opt|reference`, paging, or no optimised kernel).
    kernel_choice: KernelChoice | None = None
    #: Concatenation inputs written in place by their producers (plan/channel_slices.py), and
    #: the arena of the same options without (`--no-concat-in-place`; 0: not planned).
    channel_slices: tuple[ChannelSlice, ...] = ()
    arena_without_slices: int = 0

    @property
    def staged_bytes(self) -> int:
        """Bytes of weights copied into the arena per inference (0: nothing staged)."""
        return sum(s.nbytes for s in self.staged)

    @property
    def arena_bytes(self) -> int:
        return max((self.offsets[b.id] + b.size for b in self.buffers), default=0)

    @property
    def live_bytes(self) -> list[int]:
        """Live bytes at each step (0 = before the first operator)."""
        return live_bytes_per_step(self.buffers, len(self.order))

    @property
    def lower_bound(self) -> int:
        """Peak live bytes of this order: no layout of these buffers can use less."""
        return max(self.live_bytes, default=0)

    @property
    def peak_step(self) -> int:
        live = self.live_bytes
        return live.index(max(live)) if live else 0

    def tensor_offsets(self) -> dict[int, int]:
        """Tensor -> arena offset, aliased tensors included."""
        return {
            t: self.offsets[b.id] + inner
            for b in self.buffers
            for t, inner in b.tensor_placements()
        }

    def scratch_offsets(self) -> dict[int, int]:
        return {b.scratch_of: self.offsets[b.id] for b in self.buffers if b.scratch_of >= 0}

    def validate(self, graph: Graph, traits: Traits | None = None) -> None:
        """Raise `PlanInvalid` on a dependency violation, overlap or misalignment, and, given the
        operators' `traits`, on an output that shares bytes with an input in a way its kernel
        does not declare (or without the staging scratch it declares), and on a persistent
        area that does not hold every variable apart."""
        _check_order(graph, self.order)
        self.persistent.validate(graph)
        if self.arena_bytes < self.arena_lower_bound:
            raise PlanInvalid(
                f"arena {self.arena_bytes} below its proven bound {self.arena_lower_bound}"
            )
        for b in self.buffers:
            off = self.offsets.get(b.id)
            if off is None or off < 0 or off % b.align:
                raise PlanInvalid(f"buffer {b.id} has offset {off}, align {b.align}")
        if self.staged:
            why = check_staged(self.staged, self.buffers, self.offsets, self.arena_bytes)
            if why:
                raise PlanInvalid(why)
        ranked = sorted(self.buffers, key=lambda b: self.offsets[b.id])
        for i, a in enumerate(ranked):
            end = self.offsets[a.id] + a.size
            for b in ranked[i + 1 :]:
                if self.offsets[b.id] >= end:
                    break
                # b starts at or above a: they overlap when b starts below what a reaches at
                # their shared steps (a's size for plain buffers) and b uses bytes there.
                reach = a.extent_during(b)
                if self.offsets[b.id] < self.offsets[a.id] + reach and b.extent_during(a) > 0:
                    raise PlanInvalid(f"buffers {a.id} and {b.id} overlap in space and time")
        if traits is not None:
            offsets = self.tensor_offsets()
            scratch = {b.scratch_of: b.size for b in self.buffers if b.scratch_of >= 0}
            for op in graph.operators:
                check_sharing(graph, op, traits.get(op.index, NO_TRAITS), offsets, scratch)
            try:
                check_window_order(graph, self.order, traits, offsets)
            except WindowOrderViolated as exc:
                raise PlanInvalid(str(exc)) from None


def _check_order(graph: Graph, order: tuple[int, ...]) -> None:
    if sorted(order) != list(range(len(graph.operators))):
        raise PlanInvalid(f"order {order} is not a permutation of the operators")
    ready = set(graph.inputs) | {t.index for t in graph.tensors if t.is_constant or t.is_variable}
    for i in order:
        op = graph.operators[i]
        missing = [t for t in op.inputs if t >= 0 and t not in ready]
        if missing:
            raise PlanInvalid(f"{op.label} runs before its inputs {missing} exist")
        ready.update(op.outputs)


def plan_memory(
    graph: Graph,
    *,
    order: str = orders.DEFAULT,
    layout: str = layouts.DEFAULT,
    scratch: Mapping[int, int] | None = None,
    aliases: Aliases | None = None,
    in_place: bool = False,
    traits: Traits | None = None,
    time_budget: float | None = None,
    profiles: bool = True,
    given_order: tuple[int, ...] | None = None,
) -> MemoryPlan:
    """Choose an order and a layout by name, and return the validated plan.

    `in_place` lets tensors share storage as the operators' `traits` (codegen.lower.op_traits)
    allow for the chosen order; explicit `aliases` override that (with `traits`, the operators
    running in place get their staging scratch, and the plan is checked against them).
    `profiles`: a shared buffer occupies, at each step, only the bytes its live members reach
    (`Buffer.profile`; static offsets); off for the dynamic allocators, which move whole buffers.
    `given_order`: lay out this order instead of searching one (the plan keeps the label of
    `order`, which found it; mcugen/kernel_choice.py re-plans an order with other kernels).
    """
    if in_place and aliases is None and traits is None:
        raise ValueError("sharing storage needs the operators' traits (codegen.lower.op_traits)")
    start = time.perf_counter()
    strategy = orders.get_order(order)
    lay = remembered(layout, layouts.get_layout(layout))
    laid: dict[tuple[int, ...], _Laid] = {}
    shared: dict[tuple[int, ...], tuple[tuple[Choice, ...], int]] = {}

    def choices(chosen: tuple[int, ...]) -> tuple[tuple[Choice, ...], int]:
        if chosen not in shared:
            shared[chosen] = sharing_candidates(
                graph, chosen, scratch, aliases, in_place, traits or {}, profiles
            )
        return shared[chosen]

    def lay_out(
        chosen: tuple[int, ...], budget: float | None, ceiling: int | None = None
    ) -> _Laid | None:
        if chosen not in laid:
            found = _lay_out(*choices(chosen), lay, budget, ceiling)
            if found is None:
                return None  # nothing below the ceiling: not kept, a later call lays it out
            laid[chosen] = found
        return laid[chosen]

    def evaluate(
        chosen: tuple[int, ...], budget: float | None, ceiling: int | None = None
    ) -> tuple[int, int]:
        found = lay_out(chosen, budget, ceiling)
        if found is None:
            assert ceiling is not None
            return ceiling, ceiling  # at the ceiling or above (orders.ArenaOf)
        return found.layout.arena, max(live_bytes_per_step(found.buffers, len(chosen)), default=0)

    def laid_out(chosen: tuple[int, ...], budget: float | None) -> _Laid:
        found = lay_out(chosen, budget)
        assert found is not None
        return found

    if given_order is None:
        result = strategy(graph, scratch=scratch, time_budget=time_budget, evaluate=evaluate)
        if order == orders.DEFAULT and in_place and aliases is None:
            result = slice_order(
                graph,
                scratch,
                traits or {},
                time_budget,
                evaluate,
                result,
                lambda chosen: laid_out(chosen, None).buffers,
                lambda chosen: min(peak for peak, _, _ in choices(chosen)[0]),
            )
    else:
        peak = orders.peak_of(graph, given_order, scratch)
        result = orders.OrderResult(given_order, peak, op_working_set_bound(graph, scratch))
    best = laid_out(result.order, time_budget)
    plan = MemoryPlan(
        order=result.order,
        buffers=best.buffers,
        offsets=best.layout.offsets,
        order_strategy=f"{order}({result.chosen})" if result.chosen else order,
        layout_strategy=layout,
        plan_seconds=time.perf_counter() - start,
        unshared_order_bound=result.lower_bound,
        unshared_order_optimal=result.proven_optimal,
        arena_lower_bound=_arena_bound(graph, scratch, aliases, in_place, traits, result),
        note="; ".join(n for n in (result.note, best.layout.note) if n),
        layout_chosen=best.layout.strategy,
        layout_proven_optimal=best.layout.proven_optimal,
        persistent=persistent_layout(graph),
    )
    plan = replace(plan, channel_slices=planned_slices(graph, traits or {}, plan.tensor_offsets()))
    plan.validate(graph, traits)
    return plan


def _arena_bound(
    graph: Graph,
    scratch: Mapping[int, int] | None,
    aliases: Aliases | None,
    in_place: bool,
    traits: Traits | None,
    result: orders.OrderResult,
) -> int:
    """The bound on every plan of `graph` under the same sharing rules (plan/bounds.py); without
    sharing the order strategy's proven bound holds too."""
    if aliases is not None:
        return arena_lower_bound(graph, scratch=scratch, aliases=aliases)
    if in_place:
        return arena_lower_bound(graph, scratch=scratch, traits=traits)
    return max(arena_lower_bound(graph, scratch=scratch), result.lower_bound)


@dataclass(frozen=True)
class _Laid:
    buffers: tuple[Buffer, ...]
    layout: LayoutResult


def _lay_out(
    candidates: tuple[Choice, ...],
    tries: int,
    layout: LayoutStrategy,
    budget: float | None,
    ceiling: int | None = None,
) -> _Laid | None:
    """The layout of one order's sharing choices (`sharing_candidates`). Shared storage lowers the
    live bytes but can fragment the layout, and aliasing is greedy: when the aliases are ours to
    choose, they are laid out with and without running in place with staging, and with nothing
    shared, and the smallest arena kept (ties: the earlier, more shared). Each distinct choice is
    laid out once, by increasing peak live bytes, and none whose peak cannot beat the best arena
    so far is laid out at all (a layout never goes below its buffers' peak: the same answer, often
    for one layout instead of three). With a `ceiling`, only an arena below it matters: choices
    peaking at or above it are not laid out, and None says no arena below it exists."""
    best: tuple[int, _Laid] | None = None
    for peak, k, buffers in sorted(candidates, key=lambda c: c[:2]):
        if best is not None and (peak, k) > (best[1].layout.arena, best[0]):
            break  # this and every later choice lays out at its peak or above: no better
        if ceiling is not None and peak >= ceiling:
            break
        found = layout(buffers, time_budget=budget / tries if budget else None)
        if best is None or (found.arena, k) < (best[1].layout.arena, best[0]):
            best = (k, _Laid(buffers, found))
    if best is None or (ceiling is not None and best[1].layout.arena >= ceiling):
        return None
    return best[1]


def peak_in_order(
    graph: Graph,
    order: tuple[int, ...],
    *,
    scratch: Mapping[int, int] | None,
    in_place: bool,
    traits: Traits,
    profiles: bool,
) -> int:
    """The smallest peak live bytes of the sharing choices `plan_memory(given_order=order)` lays
    out: no layout of them is smaller, so a plan whose peak is above a bound is above it laid
    out too (mcugen/kernel_choice.py rejects kernel trials with this before laying them out)."""
    candidates, _ = sharing_candidates(graph, order, scratch, None, in_place, traits, profiles)
    return min(peak for peak, _, _ in candidates)
