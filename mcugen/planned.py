"""The static plan of a graph with given kernels, as every stage of the pipeline plans it: the
input kept in the arena or copied by the runner (`PlanOptions.keep_input`), in a searched or a
given order, and a floor under it without a layout (mcugen/kernel_choice.py and patching.py get
these as functions, so that they import nothing above them)."""

from __future__ import annotations

from dataclasses import replace

from mcugen.codegen.lower import Lowered, op_traits
from mcugen.codegen.viewmodel import scratch_sizes
from mcugen.model.ir import Graph
from mcugen.model.traits import Traits
from mcugen.options import PlanOptions
from mcugen.plan.buffers import align_up
from mcugen.plan.dynamic import Allocator
from mcugen.plan.memory_plan import MemoryPlan, peak_in_order, plan_memory


def planned_static(
    g: Graph,
    lowered: dict[int, Lowered],
    options: PlanOptions,
    order: tuple[int, ...] | None = None,
) -> MemoryPlan:
    """The plan of `g` with its input kept or not as `options.keep_input` says (static offsets
    keep it where the runner loaded it; the dynamic allocators never); in `order` when given,
    else in the order `options.order` searches."""

    def planned(keep: bool) -> MemoryPlan:
        # A kept input plans as an output too: outputs stay live to the last step.
        kept = tuple(t for t in g.inputs[:1] if keep and t not in g.outputs)
        plan = plan_buffers(
            replace(g, outputs=g.outputs + kept),
            lowered,
            options,
            op_traits(g, lowered, concat_in_place=options.concat_in_place),
            profiles=options.allocator == Allocator.STATIC,  # dynamic allocators move buffers
            given_order=order,
        )
        return replace(plan, input_kept=keep and bool(g.inputs))

    keep = options.keep_input if options.allocator == Allocator.STATIC else "no"
    if keep != "auto":
        return planned(keep == "yes")
    copy, kept = planned(False), planned(True)
    copy_bytes = align_up(g.tensors[g.inputs[0]].nbytes, 16) if g.inputs else 0
    saving = copy.arena_bytes + copy_bytes - kept.arena_bytes
    return replace(kept, input_kept_saving=saving) if saving > 0 else copy


def ram_floor(
    g: Graph, lowered: dict[int, Lowered], options: PlanOptions, order: tuple[int, ...]
) -> int:
    """No plan `planned_static(g, lowered, options, order)` needs less than this of what
    kernel_choice.ram_of counts (its arena, plus the runner's input copy when the plan decides
    whether to keep the input): the smallest peak live bytes, no layout made."""

    def peak(keep: bool) -> int:
        kept = tuple(t for t in g.inputs[:1] if keep and t not in g.outputs)
        return peak_in_order(
            replace(g, outputs=g.outputs + kept),
            order,
            scratch=scratch_sizes(lowered),
            in_place=options.in_place,
            traits=op_traits(g, lowered, concat_in_place=options.concat_in_place),
            profiles=options.allocator == Allocator.STATIC,
        )

    keep = options.keep_input if options.allocator == Allocator.STATIC else "no"
    if keep != "auto":
        return peak(keep == "yes")
    copy_bytes = align_up(g.tensors[g.inputs[0]].nbytes, 16) if g.inputs else 0
    return min(peak(False) + copy_bytes, peak(True))


def plan_buffers(
    graph: Graph,
    lowered: dict[int, Lowered],
    options: PlanOptions,
    traits: Traits,
    profiles: bool,
    given_order: tuple[int, ...] | None = None,
) -> MemoryPlan:
    """`graph`'s buffers planned as `options` say, with the kernels' scratch and `traits` (in
    `given_order` when given, else in the order `options.order` searches)."""
    return plan_memory(
        graph,
        order=options.order,
        layout=options.layout,
        scratch=scratch_sizes(lowered),
        in_place=options.in_place,
        traits=traits,
        time_budget=options.time_budget,
        profiles=profiles,
        given_order=given_order,
    )


def whole_buffers(graph: Graph, lowered: dict[int, Lowered], options: PlanOptions) -> MemoryPlan:
    """The plan paging starts from: buffers that move whole (no profiles), the input not kept."""
    return plan_buffers(
        graph,
        lowered,
        options,
        op_traits(graph, lowered, concat_in_place=options.concat_in_place),
        profiles=False,
    )
