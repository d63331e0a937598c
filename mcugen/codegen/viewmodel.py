"""View-model: everything the templates print, precomputed from the graph, plan and lowerings."""

from __future__ import annotations

from dataclasses import replace

from mcugen import __version__
from mcugen.codegen.lower import Lowered, lower_for
from mcugen.codegen.vm_nodes import check_relaid_readers, node_vm, relaid_constants
from mcugen.codegen.vm_types import (
    ARENA_SYMBOL,
    C_TYPES,
    MAX_ARENA_BYTES,
    MAX_DIMS,
    MAX_OPERANDS,
    MAX_OPERATORS,
    MAX_TENSORS,
    POOL_SECTION,
    ConstantVM,
    DynamicVM,
    ModelVM,
    NodeVM,
    PoolVM,
    StagedVM,
    TensorVM,
    VariableVM,
)
from mcugen.errors import UnsupportedError
from mcugen.model.ir import Graph
from mcugen.plan.dynamic import DynamicPlan
from mcugen.plan.fit import input_copy_in_slow_memory
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.persistent import reset_byte


def lower_all(
    graph: Graph, order: tuple[int, ...], *, kernels: str = "opt", core: str = "host"
) -> dict[int, Lowered]:
    """Lower every operator, with the optimised variants for `core` unless `kernels` is
    "reference"; the first unsupported operator raises, naming it."""
    return {i: lower_for(graph, graph.operators[i], kernels=kernels, core=core) for i in order}


def scratch_sizes(lowered: dict[int, Lowered]) -> dict[int, int]:
    return {i: low.scratch_bytes for i, low in lowered.items() if low.scratch_bytes > 0}


def _csr(rows: list[list[int]]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    starts = [0]
    for row in rows:
        starts.append(starts[-1] + len(row))
    return tuple(starts), tuple(x for row in rows for x in row)


#: The section of paging's slow memory when it is a memory of its own (templates/link.ld.j2).
SLOW_SECTION = ".mcu_slow"


def dynamic_view_model(
    dyn: DynamicPlan, num_tensors: int, *, slow_external: bool = False
) -> DynamicVM:
    """The tables runtime_c/src/allocator.c walks for `dyn`; with paging, the slow memory in
    its own section when it is `slow_external`."""
    bufs = dyn.buffers
    placements = [b.tensor_placements() for b in bufs]
    member_start, member_tensor = _csr([[t for t, _ in p] for p in placements])
    born_start, born = _csr([dyn.born(s) for s in range(dyn.steps + 1)])
    dies_start, dies = _csr([dyn.dies(s) for s in range(dyn.steps + 1)])
    move_start, move_buffer = _csr([[m.buffer for m in step] for step in dyn.moves])
    order_steps = {b.first: b.id for b in bufs if b.scratch_of >= 0}
    return DynamicVM(
        mode=dyn.mode,
        planned=int(dyn.mode in ("planned", "paged")),
        num_steps=dyn.steps + 1,
        num_offsets=max([num_tensors, *(t + 1 for t in member_tensor)]),
        moved_bytes=dyn.moved_bytes,
        buffer_bytes=tuple(b.size for b in bufs),
        initial_offsets=dyn.birth_offsets,
        member_start=member_start,
        member_tensor=member_tensor,
        member_inner=tuple(inner for p in placements for _, inner in p),
        born_start=born_start,
        born_buffer=born,
        dies_start=dies_start,
        dies_buffer=dies,
        move_start=move_start,
        move_buffer=move_buffer,
        move_offset=tuple(m.dst if m.copy else -1 - m.dst for step in dyn.moves for m in step),
        scratch_buffer=tuple(order_steps.get(pos + 1, -1) for pos in range(dyn.steps)),
        slow_bytes=dyn.slow_bytes,
        slow_section=SLOW_SECTION if slow_external else "",
    )


def build_view_model(
    graph: Graph,
    plan: MemoryPlan,
    lowered: dict[int, Lowered],
    model_name: str,
    dynamic: DynamicPlan | None = None,
) -> ModelVM:
    check_table_limits(graph, plan.arena_bytes if dynamic is None else dynamic.arena_bytes)
    offsets = plan.tensor_offsets()
    scratch = plan.scratch_offsets()
    pools = _pool_vms(plan) if dynamic is None else ()
    placed = _pool_placements(plan) if pools else {}
    arena_bytes = pools[0].bytes if pools else plan.arena_bytes
    if pools:
        assert plan.pools is not None
        offsets = {t: off for t, (k, off) in placed.items() if k == 0}
        first = plan.pools.pools[0].offsets  # kernel scratch is pinned there
        scratch = {b.scratch_of: first[b.id] for b in plan.buffers if b.scratch_of >= 0}
    if dynamic is not None:
        births = dict(enumerate(dynamic.birth_offsets))
        offsets = {
            t: births[b.id] + inner for b in plan.buffers for t, inner in b.tensor_placements()
        }
        scratch = {op: 0 for op in scratch}
    used = _used_tensors(graph)
    state = plan.persistent
    state.validate(graph)  # every variable has its place outside the arena
    tensors = []
    constants = []
    relaid = relaid_constants(lowered)
    check_relaid_readers(graph, lowered, relaid)
    for t in graph.tensors:
        if t.index not in used:
            continue
        if len(t.shape) > MAX_DIMS:
            raise UnsupportedError(
                f"tensor {t.index} has {len(t.shape)} dimensions (max {MAX_DIMS})"
            )
        symbol = None
        if t.is_constant:
            symbol = f"g_const_{t.index}"
            constants.append(ConstantVM(symbol, relaid.get(t.index, t.data or b"")))
        elif t.is_variable and t.keeps_initial and t.data is not None:
            constants.append(ConstantVM(f"g_init_{t.index}", t.data))
        elif (
            t.index not in offsets
            and t.index not in placed
            and t.index not in state.offsets
            and t.nbytes > 0
        ):
            raise UnsupportedError(f"tensor {t.index} ({t.name}) has no arena slot")
        tensors.append(
            TensorVM(
                t.index,
                t.name,
                C_TYPES[t.dtype],
                t.shape,
                t.nbytes,
                offsets.get(t.index, -1),
                symbol,
                state.offsets.get(t.index, -1),
                *_pool_ref(pools, placed.get(t.index)),
            )
        )
    emitted: dict[tuple[str, str], str] = {}
    strides = {s.producer: s.stride for s in plan.channel_slices}
    for op_index in strides:
        if not lowered[op_index].output_stride:
            raise AssertionError(f"operator {op_index}'s kernel takes no output stride")
    nodes = tuple(
        replace(
            node_vm(pos, graph, i, lowered[i], scratch.get(i, -1), emitted),
            out_stride=strides.get(i, 0),
        )
        for pos, i in enumerate(plan.order)
    )
    if plan.staged:
        assert dynamic is None and not pools, "weights are staged in one static arena only"
        tensors, nodes = _with_staged(plan, tensors, nodes)
    kernels = tuple(sorted({low.kernel for low in lowered.values()}))
    sources = tuple(sorted({src for low in lowered.values() for src in low.c_sources}))
    return ModelVM(
        version=__version__,
        model_sha256=graph.sha256,
        model_name=model_name,
        arena_bytes=arena_bytes if dynamic is None else dynamic.arena_bytes,
        tensors=tuple(tensors),
        nodes=nodes,
        constants=tuple(constants),
        inputs=graph.inputs,
        outputs=graph.outputs,
        headers=tuple(f"mcu/kernels/{k}.h" for k in kernels)
        + tuple(sorted({h for low in lowered.values() for h in low.headers})),
        kernels=kernels,
        kernel_sources=sources,
        output_scales=tuple(_scale_zp(graph, t)[0] for t in graph.outputs),
        output_zero_points=tuple(_scale_zp(graph, t)[1] for t in graph.outputs),
        sha256_bytes=tuple(bytes.fromhex(graph.sha256)) if graph.sha256 else (0,) * 32,
        mlperf_model_id=mlperf_model_id(model_name),
        input_bytes=tuple(graph.tensors[t].nbytes for t in graph.inputs),
        dynamic=None
        if dynamic is None
        else dynamic_view_model(
            dynamic,
            tensors[-1].index + 1 if tensors else 1,
            slow_external=plan.paging is not None and plan.paging.slow.external,
        ),
        state_bytes=state.bytes,
        staged_bytes=plan.staged_bytes,
        state_section="" if state.in_ram else SLOW_SECTION,
        input_kept=plan.input_kept,
        input_copy_section=SLOW_SECTION if input_copy_in_slow_memory(plan) else "",
        pools=pools,
        variables=tuple(
            VariableVM(t, off, state.sizes[t], reset_byte(graph, t), _init_symbol(graph, t))
            for t, off in state.offsets.items()
        ),
    )


def _with_staged(
    plan: MemoryPlan, tensors: list[TensorVM], nodes: tuple[NodeVM, ...]
) -> tuple[list[TensorVM], tuple[NodeVM, ...]]:
    """Tensors and nodes with the plan's staged weights: each copy a table entry after the
    graph's tensors at its arena offset, read by its operator instead of the flash tensor."""
    by_tensor = {t.index: t for t in tensors}
    by_op = {s.op: s for s in plan.staged}
    tensors = list(tensors)
    staged_nodes = []
    for node in nodes:
        s = by_op.get(node.index)
        if s is None:
            staged_nodes.append(node)
            continue
        source = by_tensor[s.tensor]
        copy = tensors[-1].index + 1
        if copy > MAX_TENSORS:
            raise UnsupportedError(
                f"staged weights need tensor entry {copy}; the runtime's tables hold at most "
                f"{MAX_TENSORS}",
                hint="drop --stage-weights",
            )
        assert source.data_symbol is not None, "only constant weights are staged"
        tensors.append(
            replace(
                source,
                index=copy,
                name=f"{source.name} (staged for operator {s.op})",
                arena_offset=s.offset,
                data_symbol=None,
            )
        )
        inputs = tuple(copy if t == s.tensor else t for t in node.inputs)
        vm = StagedVM(copy, s.tensor, source.data_symbol, s.offset, s.nbytes, s.reads)
        staged_nodes.append(replace(node, inputs=inputs, staged=vm))
    return tensors, tuple(staged_nodes)


def _init_symbol(graph: Graph, t: int) -> str | None:
    tensor = graph.tensors[t]
    return f"g_init_{t}" if tensor.keeps_initial and tensor.data is not None else None


def _pool_vms(plan: MemoryPlan) -> tuple[PoolVM, ...]:
    """The arrays of a split plan, first pool first; () for one arena."""
    if plan.pools is None or not plan.pools.split:
        return ()
    return tuple(
        PoolVM(
            p.name,
            ARENA_SYMBOL if k == 0 else f"mcu_pool_{p.name}",
            p.size,
            POOL_SECTION.format(p.name),
            p.memory.reserved > 0,
        )
        for k, p in enumerate(plan.pools.pools)
    )


def _pool_placements(plan: MemoryPlan) -> dict[int, tuple[int, int]]:
    """Tensor -> (pool, offset in it) of a split plan; kernel scratch is in pool 0 (pinned)."""
    assert plan.pools is not None
    pools = plan.pools
    return {
        t: (pools.pool_of[b.id], pools.pools[pools.pool_of[b.id]].offsets[b.id] + inner)
        for b in plan.buffers
        for t, inner in b.tensor_placements()
    }


def _pool_ref(pools: tuple[PoolVM, ...], placed: tuple[int, int] | None) -> tuple[str, int]:
    """(array, offset) of a tensor in a pool besides the first, else ("", 0)."""
    if placed is None or placed[0] == 0:
        return "", 0
    return pools[placed[0]].symbol, placed[1]


def check_table_limits(graph: Graph, arena_bytes: int) -> None:
    """The model fits the runtime's tables; one `UnsupportedError` line otherwise."""
    limits = (
        (arena_bytes, MAX_ARENA_BYTES, "arena bytes"),
        (len(graph.tensors), MAX_TENSORS, "tensors"),
        (len(graph.operators), MAX_OPERATORS, "operators"),
        (max((max(len(op.inputs), len(op.outputs)) for op in graph.operators), default=0),
         MAX_OPERANDS, "inputs or outputs of one operator"),
    )  # fmt: skip
    for value, limit, what in limits:
        if value > limit:
            raise UnsupportedError(
                f"the model needs {value} {what}; the runtime's tables hold at most {limit}"
            )


MLPERF_IDS = (
    ("kws", "kws01"),
    ("vww", "vww01"),
    ("person", "vww01"),
    ("resnet", "ic01"),
    ("_ic_", "ic01"),
    ("toycar", "ad01"),
    ("_ad_", "ad01"),
    ("sww", "strww01"),
)


def mlperf_model_id(model_name: str) -> str:
    """The MLPerf Tiny benchmark a model file belongs to, guessed from its name."""
    name = f"_{model_name.lower()}_"
    return next((mid for key, mid in MLPERF_IDS if key in name), "unknown")


def _scale_zp(graph: Graph, index: int) -> tuple[float, int]:
    q = graph.tensors[index].quant
    if q is None or graph.tensors[index].dtype in ("float32", "float16", "float64"):
        return 1.0, 0
    return q.scale, q.zero_point


def _used_tensors(graph: Graph) -> set[int]:
    used = set(graph.inputs) | set(graph.outputs)
    for op in graph.operators:
        used.update(t for t in op.inputs if t >= 0)
        used.update(op.outputs)
    return used
