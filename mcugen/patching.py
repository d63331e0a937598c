"""The pipeline's patch stage: plan the graph whole, ask the patch planner (plan/patches) for a
stage, rewrite the graph to run it tile by tile (model/patch_rewrite.py), plan that, and keep it
only when its arena is really smaller. The planner's estimate picks the candidates (the best and
up to 3 runners-up whose estimated peak is within 5 % of the best's); each is rewritten in the
whole graph's order with the stage tiled in place of its first operator (tile by tile) and
screened by its peak live bytes with sharing (no layout); then the one with the lowest peak is
laid out for real, and kept when its arena beats the graph run whole. Only one layout: on the 35
shared models and generated graphs, the screen's best was the one kept wherever any was, and
laying out the others cost inception8 1.1 s for nothing. The rest of the graph keeps its
order, and no order search runs over the hundreds of tile operators (a weakness: an order
search might interleave the rest better around the stage; another: a candidate the screen ranks
second might lay out a few bytes smaller). Cost: the rewrite, lowering and sharing of each
candidate's tiled graph (hundreds of operators) and the one layout dominate; up to 0.7 s on the
shared models (mobilenet_v2, in a fresh process)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from mcugen.codegen.lower import Lowered, lower_for, op_traits
from mcugen.codegen.viewmodel import scratch_sizes
from mcugen.model.ir import Graph, Operator
from mcugen.model.macs import graph_macs
from mcugen.model.patch_rewrite import tile_stage
from mcugen.plan.aliasing import shared_peak
from mcugen.plan.buffers import tensor_lifetimes
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.patches import PatchPlan, patch_problem, plan_patches

if TYPE_CHECKING:
    from mcugen.options import PlanOptions

Prepared = tuple[Graph, dict[int, Lowered], MemoryPlan]


#: Stages searched one after another at most (each needs a search, a screen and a layout).
MAX_STAGES = 4


def with_patch_stages(
    graph: Graph,
    lowered: dict[int, Lowered],
    whole: MemoryPlan,
    options: PlanOptions,
    plan_fn: Callable[[Graph, dict[int, Lowered], PlanOptions], MemoryPlan],
    enough: Callable[[Graph, MemoryPlan], bool] = lambda graph, plan: False,
) -> Prepared:
    """`graph` with patch stages found one after another: the first as `with_patch_stage`
    finds it, each next one searched on the graph tiled so far in its planned order, within the
    MACs the earlier stages left of the budget (a fraction of `graph`'s MACs), and kept only
    when its arena is smaller. Stops when a search keeps nothing, the budget is spent, after
    `MAX_STAGES`, or once `enough` says the plan so far will do (the pipeline's auto mode: it
    fits the board). A later stage covers a peak the earlier ones moved to, elsewhere in the
    model (person_detect: a second stage over its next high-resolution block). Its operators
    are reported as the model's (by their output tensors' names; a tile's copy of an operator
    is named after it)."""
    total = graph_macs(graph)
    current = with_patch_stage(graph, lowered, whole, options, plan_fn)
    first = current[2].patches
    if first is None or first.stage is None:
        return current
    names = {op.outputs[0]: op.index for op in graph.operators if op.outputs}
    by_name = {graph.tensors[t].name: i for t, i in names.items()}
    later: list[tuple[PatchPlan, int, int]] = []
    for _ in range(MAX_STAGES - 1):
        g, low, plan = current
        now = graph_macs(g)
        left = options.patch_overhead * total - (now - total)
        if left <= 0 or enough(g, plan):
            break
        step = replace(options, patch_overhead=left / now)
        found = with_patch_stage(g, low, plan, step, plan_fn)
        report = found[2].patches
        if report is None or report.stage is None:
            break
        ops = _model_operators(g, report.stage.ops, by_name)
        stage = replace(report.stage, ops=ops)
        later.append((replace(report, stage=stage), plan.arena_bytes, found[2].arena_bytes))
        current = found
    g, low, plan = current
    return (
        g,
        low,
        replace(
            plan,
            patches=first,
            later_patches=tuple(later),
            arena_without_patches=whole.arena_bytes,
            model_operators=len(graph.operators),
        ),
    )


def _model_operators(
    graph: Graph, ops: tuple[int, ...], by_name: dict[str, int]
) -> tuple[int, ...]:
    """The model's operators that `ops` of a tiled graph are, or are tiles of (sorted)."""
    found = set()
    for i in ops:
        name = graph.tensors[graph.operators[i].outputs[0]].name
        while name not in by_name and "/" in name:
            name = name.rsplit("/", 1)[0]
        if name in by_name:
            found.add(by_name[name])
    return tuple(sorted(found))


def with_patch_stage(
    graph: Graph,
    lowered: dict[int, Lowered],
    whole: MemoryPlan,
    options: PlanOptions,
    plan_fn: Callable[[Graph, dict[int, Lowered], PlanOptions], MemoryPlan],
) -> Prepared:
    """`graph` with the patch stage whose planned arena is smallest, if smaller than `whole`'s
    (`plan_fn` plans a graph with `options` as the pipeline does)."""
    traits = op_traits(graph, lowered)
    problem = patch_problem(
        graph, whole.order, traits, member_live_bytes(graph, whole), graph_macs(graph)
    )
    found = plan_patches(
        problem,
        budget=options.patch_overhead,
        strategy=options.patcher,
    )
    best: Prepared = (graph, lowered, whole)
    kept = None
    stages = (found.stage, *found.runners_up) if found.stage is not None else ()
    # runners-up whose estimated peak is more than 5 % above the best's are not worth the rewrite
    stages = tuple(s for s in stages if s.peak * 100 <= stages[0].peak * 105)
    screened = []
    for rank, stage in enumerate(stages):
        tiled = tile_stage(graph, stage.ops, stage.rows, stage.cols, whole.order)
        tiled_lowered = lower_tiles(tiled, options)
        peak = shared_live_peak(tiled, tiled_lowered)
        if peak < whole.arena_bytes:
            screened.append((peak, rank, stage, tiled, tiled_lowered))
    if screened:  # one layout: the screen's best, kept if it lays out below the graph run whole
        _, _, stage, tiled, tiled_lowered = min(screened, key=lambda c: c[:2])
        plan = plan_fn(tiled, tiled_lowered, replace(options, order="stored"))
        if plan.arena_bytes < best[2].arena_bytes:
            best, kept = (tiled, tiled_lowered, plan), stage
    report = replace(found, stage=kept, runners_up=())
    plan = replace(
        best[2],
        patches=report,
        arena_without_patches=whole.arena_bytes,
        model_operators=len(graph.operators),
    )
    return best[0], best[1], plan


def shared_live_peak(graph: Graph, lowered: dict[int, Lowered]) -> int:
    """Peak live bytes of `graph` in its stored order with everything its operators let share,
    their scratch and staging included: what a candidate's layout reaches when it packs without
    gaps, at a fraction of a layout's cost (the screen of `with_patch_stage`)."""
    order = tuple(range(len(graph.operators)))
    traits = op_traits(graph, lowered)
    return shared_peak(graph, order, traits, scratch=scratch_sizes(lowered), profiles=True)


def lower_tiles(graph: Graph, options: PlanOptions) -> dict[int, Lowered]:
    """Every operator of a tiled graph lowered, tiles of one geometry once: a lowering depends
    on the operator's opcode, options and constant inputs and on its activations' shapes and
    quantization, not on which tensors they are."""
    lowered = {}
    cache: dict[tuple[object, ...], Lowered] = {}  # constants are named by index: per graph
    for op in graph.operators:
        key = _lowering_key(graph, op)
        if key not in cache:
            cache[key] = lower_for(graph, op, kernels=options.kernels, core=options.core)
        lowered[op.index] = cache[key]
    return lowered


def _lowering_key(graph: Graph, op: Operator) -> tuple[object, ...]:
    def operand(t: int) -> object:
        if t < 0 or graph.tensors[t].is_constant:
            return t
        tensor = graph.tensors[t]
        return tensor.shape, tensor.dtype, tensor.quant

    options = tuple(sorted((k, repr(v)) for k, v in op.options.items()))
    inputs = tuple(operand(t) for t in op.inputs)
    return op.opcode, op.custom_code, options, inputs, tuple(operand(t) for t in op.outputs)


def member_live_bytes(graph: Graph, plan: MemoryPlan) -> list[int]:
    """Bytes in use at each step of `plan`, each buffer counted from its lowest to its highest
    live member's byte at that step (a buffer's profile counts from its start: an output laid D
    bytes before its input counts those D bytes while only the input lives)."""
    life = tensor_lifetimes(graph, plan.order)
    live = [0] * (len(plan.order) + 1)
    for b in plan.buffers:
        placements = b.tensor_placements()
        if len(placements) <= 1:
            for first, last, size in b.segments():
                for s in range(first, last + 1):
                    live[s] += size
            continue
        for s in range(b.first, b.last + 1):
            spans = [
                (off, off + graph.tensors[t].nbytes)
                for t, off in placements
                if t in life and life[t][0] <= s <= life[t][1]
            ]
            if spans:
                live[s] += max(e for _, e in spans) - min(o for o, _ in spans)
    return live
