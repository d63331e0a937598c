"""The main job as pure stages: model file -> graph -> plan -> lowered kernels -> C sources."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from mcugen import progress
from mcugen.codegen.lower import Lowered, op_traits
from mcugen.codegen.render import render_model
from mcugen.codegen.viewmodel import build_view_model, lower_all
from mcugen.codegen.vm_types import ModelVM
from mcugen.codegen.weight_reads import weight_reads
from mcugen.errors import McugenError, UnsupportedError
from mcugen.kernel_choice import choose_kernels
from mcugen.model.ir import Graph
from mcugen.model.load import load_model
from mcugen.model.rewrite import rewrite
from mcugen.options import PlanOptions
from mcugen.patching import with_patch_stages
from mcugen.plan import dynamic
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan import pools as pool_strategies
from mcugen.plan.aliasing import shared_peak
from mcugen.plan.buffers import ARENA_ALIGNMENT
from mcugen.plan.dynamic import Allocator
from mcugen.plan.fit import allocator_arena, firmware_ram, fit_of, input_copy_bytes
from mcugen.plan.memo import remembering
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.paging import PagingError
from mcugen.plan.paging.target import paged_dynamic, plan_paging
from mcugen.plan.state_memory import place_state
from mcugen.plan.weight_staging import stage_weights
from mcugen.planned import planned_static, ram_floor, whole_buffers


@dataclass(frozen=True)
class Generated:
    graph: Graph
    plan: MemoryPlan
    lowered: dict[int, Lowered]
    view_model: ModelVM
    files: dict[str, str]
    source: str = ""  # the .tflite path, when generated from a file
    dynamic: dynamic.DynamicPlan | None = None  # allocator "compacting" or "planned"


def stored_order_peak(graph: Graph) -> int:
    """The planner's judgement of a rewrite: peak live bytes of the stored order with everything
    the operators' traits let share."""
    return shared_peak(graph, tuple(range(len(graph.operators))), op_traits(graph))


def rewritten(graph: Graph, *, portable: bool = False) -> Graph:
    """`graph` after every safe rewrite, the judged ones kept where the planner prefers them."""
    return rewrite(graph, stored_order_peak, portable=portable)


def prepare(graph: Graph, options: PlanOptions) -> tuple[Graph, dict[int, Lowered], MemoryPlan]:
    """Rewrite, lower and plan (with a patch stage when it makes the arena smaller, static
    offsets only); `UnsupportedError` names the first unsupported operator."""
    with (
        progress.step("planning"),
        remembering(),
    ):  # each layout and sharing made once (plan/memo.py)
        g, lowered, plan = _prepare(graph, options)
    return g, lowered, with_staged_weights(g, lowered, plan, options)


def with_staged_weights(
    graph: Graph, lowered: dict[int, Lowered], plan: MemoryPlan, options: PlanOptions
) -> MemoryPlan:
    """`plan` with the weights `--stage-weights auto` copies into its free arena bytes
    (plan/weight_staging.py); as it is when off, paged, split over pools or not static."""
    if options.stage_weights == "off":
        return plan
    if options.allocator != Allocator.STATIC:
        return replace(plan, staging=f"not with --allocator {options.allocator}")
    if plan.paging is not None:
        return replace(plan, staging="not with paging")
    if plan.pools is not None and plan.pools.split:
        return replace(plan, staging="not with an arena split over pools")
    reads = weight_reads(graph, lowered)
    staged = stage_weights(plan.buffers, plan.offsets, plan.order, plan.arena_bytes, reads)
    staged_plan = replace(plan, staged=staged, staging=options.stage_weights)
    staged_plan.validate(graph)
    return staged_plan


def _prepare(graph: Graph, options: PlanOptions) -> tuple[Graph, dict[int, Lowered], MemoryPlan]:
    g = rewritten(graph) if options.rewrites else graph
    lowered = lower_all(
        g, tuple(range(len(g.operators))), kernels=options.kernels, core=options.core
    )
    paging = options.paging
    budget = options.ram_budget
    if paging is not None and budget is not None:
        paged = page(g, lowered, whole_buffers(g, lowered, options), options)
        if options.board is not None:  # a board: its RAM holds the slow array too
            check_paging_pays(g, planned_static(g, lowered, options), paged, budget)
        return g, lowered, placed_state(g, paged, options)
    lowered, whole = choose_kernels(
        g,
        lowered,
        options,
        planned_static,
        lambda plan: _fits_board(g, plan, options),
        ram_floor,
    )
    tiled, tiled_lowered = g, lowered
    chosen = assign_pools(g, placed_state(g, whole, options), options)
    if _patches_wanted(g, chosen, options):
        tiled, tiled_lowered, patched = with_patch_stages(
            g, lowered, whole, options, planned_static, _enough(options)
        )
        chosen = assign_pools(tiled, placed_state(tiled, patched, options), options)
    if paging is not None and paging.slow.external and chosen.pools_error:
        # paging runs the graph whole (patch stages are not paged yet)
        state = placed_state(g, whole, options).persistent
        whole = replace(whole_buffers(g, lowered, options), persistent=state)
        return g, lowered, page(g, lowered, whole, options)
    return tiled, tiled_lowered, chosen


def _patches_wanted(graph: Graph, whole: MemoryPlan, options: PlanOptions) -> bool:
    """Whether to look for a patch stage after `whole`, the plan of `graph` run whole with its
    pools: always when asked to, else (`patch_when` "auto") only when it does not fit the
    board's RAM (the fit verdict's RAM count of `limits`; without limits, its memories' pools)
    and no external memory can take pages of it, so that a stage's extra MACs are spent only where
    nothing else makes the model fit."""
    if options.patch_overhead <= 0 or options.allocator != Allocator.STATIC:
        return False
    if options.patch_when == "always":
        return True
    if options.paging is not None and options.paging.slow.external:
        return False
    return _fits_board(graph, whole, options) is False


def _enough(options: PlanOptions) -> Callable[[Graph, MemoryPlan], bool]:
    """When to stop adding patch stages: never before the budget is spent when they are asked
    for (`--patch-overhead F`), once the plan fits the board when they are looked for only
    because it did not (auto)."""
    if options.patch_when == "always":
        return lambda graph, plan: False
    return lambda graph, plan: _fits_board(graph, plan, options) is True


def _fits_board(graph: Graph, plan: MemoryPlan, options: PlanOptions) -> bool | None:
    """Whether `plan` fits the board's RAM (the fit verdict's count); None without a board.
    A plan's pools are assigned here when it has none yet, as the pipeline assigns them."""
    limits = options.board
    if limits is None:
        return None
    if plan.pools is None:
        plan = assign_pools(graph, placed_state(graph, plan, options), options)
    if not limits.ram_size:
        # memories without the board's totals (the library): the pools decide
        return not (bool(limits.pool_memories()) and bool(plan.pools_error))
    # the fit verdict's RAM count decides: buffers no arrangement of the memories takes still
    # fit as one arena over the RAM when it is large enough (the verdict and the linker agree)
    return fit_of(graph, plan, options.allocator, 0, limits).ram_need <= limits.ram_size


def placed_state(graph: Graph, plan: MemoryPlan, options: PlanOptions) -> MemoryPlan:
    """`plan` with its model state in the memory `place_state` picks: the RAM while the RAM holds
    it next to the arena (one arena, or paging's fast part), the stack and the firmware's RAM,
    else the board's external RAM (plan/state_memory.py)."""
    target = options.board
    if target is None or not plan.persistent.bytes:
        return plan
    allocator = dynamic.PAGED if plan.paging is not None else options.allocator
    rest = allocator_arena(plan, allocator) + target.stack
    rest += firmware_ram(graph, plan, allocator, target)
    memory = place_state(plan.persistent.bytes, rest, target, options.state_memory)
    return replace(plan, persistent=replace(plan.persistent, memory=memory))


def page(
    graph: Graph, lowered: dict[int, Lowered], plan: MemoryPlan, options: PlanOptions
) -> MemoryPlan:
    """`plan` with its buffers paged (plan/paging/target.py) through the fast memory: the RAM
    budget, or the RAM the firmware leaves (its stack, fixed RAM and tables, the model state)."""
    costs = options.paging
    assert costs is not None and options.target is not None
    target = options.target
    if options.allocator not in (Allocator.STATIC, Allocator.PAGED):
        raise UnsupportedError(
            f"paging moves buffers itself; it cannot run with --allocator {options.allocator}",
            hint="drop --allocator",
        )
    if target.ram_budget is not None:
        capacity = target.ram_budget // ARENA_ALIGNMENT * ARENA_ALIGNMENT
    else:
        reserve = target.stack + firmware_ram(graph, plan, dynamic.PAGED, target)
        capacity = (target.ram_size - reserve - plan.persistent.ram_bytes) // 16 * 16
    with progress.step("paging"):
        plan, tried = _paging_order(graph, lowered, plan, options, max(capacity, 0))
        paging = plan_paging(
            graph, plan.order, plan.buffers, max(capacity, 0), costs, layout=plan.offsets
        )
    return replace(plan, paging=replace(paging, orders_tried=tried))


def check_paging_pays(graph: Graph, unpaged: MemoryPlan, paged: MemoryPlan, budget: int) -> None:
    """Without an external RAM (a `--ram-budget` plan whose paged-out buffers stay in an array
    in the same RAM), refuse a schedule that takes as much RAM as the plan without a budget or
    more (arena, slow array and the runner's input copy): it would cost the user RAM for nothing
    (issue 31). Called for boards; the host's nominal slow memory pages for testing."""
    paging = paged.paging
    if paging is None or paging.slow.external:
        return
    copy = input_copy_bytes(graph, paged, "ram")
    total = paging.fast_bytes + paging.slow_bytes + copy
    plain = unpaged.arena_bytes + input_copy_bytes(graph, unpaged, "ram")
    if total < plain:
        return
    raise McugenError(
        f"--ram-budget {budget}: with no external RAM, what is paged out of the budget "
        f"({paging.slow_bytes:,} bytes) stays in RAM: {total:,} bytes in all with the input "
        f"copy, no less than the {plain:,} bytes without a budget",
        hint="drop --ram-budget, or page to a board with external RAM (--board disco-f746ng)",
    )


def _paging_order(
    graph: Graph,
    lowered: dict[int, Lowered],
    plan: MemoryPlan,
    options: PlanOptions,
    capacity: int,
) -> tuple[MemoryPlan, tuple[tuple[str, int], ...]]:
    """With `--order auto`, the candidate order (stored, greedy, optimal) whose buffers the
    heuristic pages at the least modelled cost (ties: the smaller arena, then the earlier): an
    order that pages less is a better order. Returns the plan of that order and each distinct
    candidate's heuristic cost (millicycles). Other orders are kept as they are."""
    costs = options.paging
    if options.order != orders.DEFAULT or costs is None:
        return plan, ()
    quick = replace(costs, pager="belady")
    best: tuple[int, int, int, MemoryPlan] | None = None
    tried: list[tuple[str, int]] = []
    seen: set[tuple[int, ...]] = set()
    failure: PagingError | None = None
    for k, name in enumerate(orders.AUTO_CANDIDATES):
        candidate = whole_buffers(graph, lowered, replace(options, order=name))
        if candidate.order in seen:
            continue
        seen.add(candidate.order)
        try:
            cost = plan_paging(
                graph, candidate.order, candidate.buffers, capacity, quick, candidate.offsets
            ).cost
        except PagingError as exc:
            failure = failure or exc
            continue
        tried.append((name, cost))
        if best is None or (cost, candidate.arena_bytes, k) < best[:3]:
            best = (cost, candidate.arena_bytes, k, candidate)
    if best is None:
        assert failure is not None
        raise failure
    return best[3], tuple(tried)


def assign_pools(graph: Graph, plan: MemoryPlan, options: PlanOptions) -> MemoryPlan:
    """`plan` with its buffers assigned to the internal memories of `options.target`
    (plan/pools); as it is without memories or with a dynamic allocator. The second memory,
    fastest first, holds the firmware's own RAM too: its stack, fixed RAM and model-sized
    buffers (plan/fit.py's count) and the model state, so each memory's pool is exactly what
    the linker has room for. When no arrangement fits, the plan keeps one arena and says why
    (`pools_error`), so the fit verdict reports the shortfall."""
    target = options.target
    usable = target.pool_memories() if target is not None else ()
    if target is None or not usable or options.allocator != Allocator.STATIC:
        return plan
    reserve = target.stack + firmware_ram(graph, plan, dynamic.STATIC, target)
    reserve += plan.persistent.ram_bytes
    ranked = pool_strategies.rank_memories(usable)
    at = min(1, len(ranked) - 1)
    memories = tuple(
        replace(m, size=max(m.size - reserve, 0), reserved=reserve) if k == at else m
        for k, m in enumerate(ranked)
    )
    scratch = frozenset(b.id for b in plan.buffers if b.scratch_of >= 0)
    accesses = pool_strategies.buffer_accesses(graph, plan.order, plan.buffers)
    problem = pool_strategies.PoolProblem(plan.buffers, plan.offsets, accesses, memories, scratch)
    lay = layouts.get_layout(options.layout)
    try:
        found = pool_strategies.POOLS.get(options.pools)(
            problem, lambda buffers: lay(buffers, time_budget=options.time_budget)
        )
    except pool_strategies.PoolsDoNotFit as exc:
        return replace(plan, pools_error=exc.what)
    return replace(plan, pools=found)


def generate(
    graph: Graph, *, model_name: str = "model", options: PlanOptions | None = None
) -> Generated:
    """Plan, lower and render `graph`."""
    options = options or PlanOptions()
    g, lowered, plan = prepare(graph, options)
    return render(g, lowered, plan, model_name=model_name, allocator=options.allocator)


def render(
    graph: Graph,
    lowered: dict[int, Lowered],
    plan: MemoryPlan,
    *,
    model_name: str,
    allocator: Allocator,
) -> Generated:
    """The C sources of a prepared model (`prepare`'s three results) for `allocator`."""
    dyn: dynamic.DynamicPlan | None
    with progress.step("generating C"):
        if plan.paging is not None:
            dyn = paged_dynamic(plan.paging, plan.buffers, len(plan.order))
        else:
            dyn = plan_allocator(plan, allocator, graph.outputs)
        vm = build_view_model(graph, plan, lowered, model_name, dynamic=dyn)
        return Generated(graph, plan, lowered, vm, render_model(vm), dynamic=dyn)


def with_allocator(gen: Generated, allocator: Allocator) -> Generated:
    """The same graph, order and buffers as `gen` with another allocator mode: a like-for-like
    baseline (re-planning could pick another order when a time budget runs out)."""
    dyn = plan_allocator(gen.plan, allocator, gen.graph.outputs)
    vm = build_view_model(gen.graph, gen.plan, gen.lowered, gen.view_model.model_name, dynamic=dyn)
    return replace(gen, view_model=vm, files=render_model(vm), dynamic=dyn)


def plan_allocator(
    plan: MemoryPlan, allocator: Allocator, graph_outputs: tuple[int, ...] = ()
) -> dynamic.DynamicPlan | None:
    """The moves of a dynamic allocator for `plan`'s order and buffers; None for static."""
    if dynamic.ALLOCATORS.get(allocator) is None:
        return None
    outputs = frozenset(
        b.id for b in plan.buffers for t, _ in b.tensor_placements() if t in graph_outputs
    )
    try:
        return dynamic.plan_dynamic(allocator, plan.buffers, len(plan.order), plan.offsets, outputs)
    except dynamic.DynamicPlanInvalid as e:
        raise UnsupportedError(f"allocator {allocator}: {e}; use --allocator static") from e


def generate_from_file(path: str | Path, options: PlanOptions | None = None) -> Generated:
    graph = load_model(path, numerics=options.onnx_numerics if options is not None else None)
    gen = generate(graph, model_name=Path(path).stem, options=options)
    return replace(gen, source=str(path))
