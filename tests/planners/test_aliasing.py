"""Aliasing (views, in-place element-wise operators and PAD, concatenation as a no-op): the arena
shrinks, plans validate, and no tensor is clobbered while it is still needed (random graphs, the
unit decisions, the incremental peak check, a shared buffer's extent step by step). The generated C
against TFLM: test_aliasing_tflm.py."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.codegen.lower import op_traits
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.tflite_import import import_model
from mcugen.plan.aliasing import aliases_for
from mcugen.plan.buffers import activation_buffers, align_up, group_extent, live_bytes_per_step
from mcugen.plan.layout.greedy import greedy_by_size
from mcugen.plan.memory_plan import MemoryPlan
from support import (
    SHARED_MODELS,
    highest_ready_first,
)
from testgraphs import benchmark_suite

# --- byte-level check: no tensor is overwritten while it is still needed ------------------------


def _labels(graph: Graph, t: int, counter: list[int]) -> np.ndarray:
    """Fresh byte labels shaped (*shape, element bytes)."""
    tensor = graph.tensors[t]
    size = tensor.nbytes // max(tensor.num_elements, 1)
    n = tensor.nbytes
    counter[0] += n
    return np.arange(counter[0] - n, counter[0]).reshape(*tensor.shape, size)


def _expected(graph: Graph, op: Operator, content: dict[int, np.ndarray], counter: list[int]):
    """What each output of `op` holds, as byte labels: views and concatenations move labels."""
    if op.opcode in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
        y = graph.tensors[op.outputs[0]]
        return [content[op.inputs[0]].reshape(*y.shape, -1)]
    if op.opcode == "CONCATENATION":
        axis = int(op.options.get("axis", 0)) % len(graph.tensors[op.outputs[0]].shape)
        return [np.concatenate([content[t] for t in op.inputs], axis=axis)]
    return [_labels(graph, t, counter) for t in op.outputs]


def assert_no_clobbering(graph: Graph, order: Sequence[int], offsets: dict[int, int]) -> None:
    """Simulate the arena byte by byte: every input holds its value when its operator runs, and
    every graph output at the end. Element-wise in-place kernels read before they write."""
    arena = set(graph.activation_tensors())
    size = max((offsets[t] + graph.tensors[t].nbytes for t in offsets), default=0)
    memory = np.full(size, -1, dtype=np.int64)
    content: dict[int, np.ndarray] = {}
    counter = [0]

    def store(t: int, labels: np.ndarray) -> None:
        content[t] = labels
        if t in arena and graph.tensors[t].nbytes:
            memory[offsets[t] : offsets[t] + graph.tensors[t].nbytes] = labels.ravel()

    def check(t: int, where: str) -> None:
        if t in arena and graph.tensors[t].nbytes:
            held = memory[offsets[t] : offsets[t] + graph.tensors[t].nbytes]
            assert np.array_equal(held, content[t].ravel()), f"tensor {t} clobbered {where}"

    for t in graph.inputs:
        store(t, _labels(graph, t, counter))
    for i in order:
        op = graph.operators[i]
        for t in op.inputs:
            if t >= 0 and t not in content:
                content[t] = _labels(graph, t, counter)  # constants
            if t >= 0:
                check(t, f"before {op.label}")
        for t, labels in zip(op.outputs, _expected(graph, op, content, counter), strict=True):
            store(t, labels)
    for t in graph.outputs:
        check(t, "at the end")


def checked_plan(graph: Graph, order: Sequence[int]) -> tuple[int, int]:
    """(peak live bytes without aliasing, with); asserts the aliased plan is valid and sound."""
    plain = activation_buffers(graph, order)
    buffers = activation_buffers(graph, order, aliases=aliases_for(graph, order, op_traits(graph)))
    plan = MemoryPlan(tuple(order), buffers, greedy_by_size(buffers), "given", "greedy_by_size")
    plan.validate(graph, op_traits(graph))
    assert_no_clobbering(graph, order, plan.tensor_offsets())
    return max(live_bytes_per_step(plain, len(order))), plan.lower_bound


@st.composite
def elementwise_dags(draw: st.DrawFn) -> tuple[Graph, tuple[int, ...]]:
    """Random graphs of views, element-wise operators, concatenations and opaque operators over
    1-D int8 tensors, with a random topological order."""
    tensors = [Tensor(0, "in", (draw(st.integers(1, 64)),), "int8")]
    ops: list[Operator] = []
    for k in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["RESHAPE", "RELU", "ADD", "CONCATENATION", "PAD", "FC"]))
        x = draw(st.integers(0, len(tensors) - 1))
        size = tensors[x].shape[0]
        inputs = [x]
        if kind == "ADD":
            same = [t.index for t in tensors if t.shape[0] in (size, 1)]
            inputs.append(draw(st.sampled_from(same)))
        elif kind == "CONCATENATION":
            inputs.append(draw(st.integers(0, len(tensors) - 1)))
            size = sum(tensors[t].shape[0] for t in inputs)
        elif kind == "FC":
            size = draw(st.integers(1, 64))
        elif kind == "PAD":
            size += draw(st.integers(0, 40))
        y = len(tensors)
        tensors.append(Tensor(y, f"t{y}", (size,), "int8"))
        ops.append(Operator(k, kind, 1, tuple(inputs), (y,)))
    consumed = {t for op in ops for t in op.inputs}
    outputs = tuple(t.index for t in tensors[1:] if t.index not in consumed) or (len(tensors) - 1,)
    graph = Graph(tuple(tensors), tuple(ops), (0,), outputs)
    return graph, _random_topological_order(graph, draw)


def _random_topological_order(graph: Graph, draw: st.DrawFn) -> tuple[int, ...]:
    ready = set(graph.inputs)
    left = list(range(len(graph.operators)))
    order = []
    while left:
        runnable = [i for i in left if all(t in ready for t in graph.operators[i].inputs)]
        pick = draw(st.sampled_from(runnable))
        order.append(pick)
        left.remove(pick)
        ready.update(graph.operators[pick].outputs)
    return tuple(order)


@settings(max_examples=300, deadline=None)
@given(elementwise_dags())
def test_aliasing_is_sound_on_random_graphs(case: tuple[Graph, tuple[int, ...]]) -> None:
    graph, order = case
    plain, aliased = checked_plan(graph, order)
    assert aliased <= plain


# --- unit checks of the decisions --------------------------------------------------------------


def _chain(*opcodes: str, sizes: Sequence[int] = (32,)) -> Graph:
    """in -> FC -> opcodes... (each reads the previous tensor) -> output."""
    tensors = [Tensor(0, "in", (sizes[0],), "int8"), Tensor(1, "a", (sizes[0],), "int8")]
    ops = [Operator(0, "FC", 1, (0,), (1,))]
    for k, code in enumerate(opcodes, start=1):
        tensors.append(Tensor(k + 1, f"t{k + 1}", (sizes[0],), "int8"))
        ops.append(Operator(k, code, 1, (k,), (k + 1,)))
    return Graph(tuple(tensors), tuple(ops), (0,), (len(tensors) - 1,))


def test_views_alias_their_input_even_graph_io() -> None:
    graph = _chain("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
    assert aliases_for(graph, (0, 1, 2, 3), op_traits(graph)) == {2: (1, 0), 3: (2, 0), 4: (3, 0)}
    assert aliases_for(graph, (0, 1, 2, 3), op_traits(graph), views=False) == {}


def test_in_place_needs_the_input_to_die_there() -> None:
    tensors = [Tensor(i, f"t{i}", (16,), "int8") for i in range(5)]
    ops = (
        Operator(0, "FC", 1, (0,), (1,)),
        Operator(1, "RELU", 1, (1,), (2,)),
        Operator(2, "FC", 1, (1,), (3,)),
        Operator(3, "ADD", 1, (2, 3), (4,)),
    )
    graph = Graph(tuple(tensors), ops, (0,), (4,))
    # t1 is read again by operator 2 after the RELU: no in place there; the ADD writes over t2.
    assert aliases_for(graph, (0, 1, 2, 3), op_traits(graph)) == {4: (2, 0)}
    # with operator 2 first, the RELU is t1's last use and may overwrite it
    assert aliases_for(graph, (0, 2, 1, 3), op_traits(graph)) == {2: (1, 0), 4: (2, 0)}


def test_in_place_refuses_broadcast_graph_inputs_and_shared_operands() -> None:
    tensors = [Tensor(0, "in", (8,), "int8"), Tensor(1, "one", (1,), "int8")]
    tensors += [Tensor(i, f"t{i}", (8,), "int8") for i in range(2, 5)]
    ops = (
        Operator(0, "FC", 1, (0,), (1,)),  # t1 has one element: broadcast in the ADD
        Operator(1, "ADD", 1, (1, 0), (2,)),  # t0 is a graph input: never overwritten
        Operator(2, "RESHAPE", 1, (2,), (3,)),
        Operator(3, "MUL", 1, (2, 3), (4,)),  # t2 and t3 share storage: neither is overwritten
    )
    graph = Graph(tuple(tensors), ops, (0,), (4,))
    assert aliases_for(graph, (0, 1, 2, 3), op_traits(graph)) == {3: (2, 0)}


def test_concatenation_places_inputs_side_by_side() -> None:
    tensors = [Tensor(0, "in", (8,), "int8")]
    tensors += [Tensor(i, f"t{i}", (s,), "int8") for i, s in ((1, 8), (2, 4), (3, 12), (4, 3))]
    ops = (
        Operator(0, "FC", 1, (0,), (1,)),
        Operator(1, "FC", 1, (0,), (2,)),
        Operator(2, "CONCATENATION", 1, (1, 2), (3,), {"axis": 0}),
        Operator(3, "FC", 1, (3,), (4,)),
    )
    graph = Graph(tuple(tensors), ops, (0,), (4,))
    assert aliases_for(graph, (0, 1, 2, 3), op_traits(graph)) == {1: (3, 0), 2: (3, 8)}
    plain, aliased = checked_plan(graph, (0, 1, 2, 3))
    assert (plain, aliased) == (48, 32)


def test_concatenation_of_a_graph_input_or_on_an_inner_axis_is_copied() -> None:
    tensors = [Tensor(0, "in", (2, 4), "int8"), Tensor(1, "a", (2, 4), "int8")]
    tensors += [Tensor(2, "z", (2, 8), "int8"), Tensor(3, "y", (4,), "int8")]
    ops = (
        Operator(0, "FC", 1, (0,), (1,)),
        Operator(1, "CONCATENATION", 1, (0, 1), (2,), {"axis": 1}),
        Operator(2, "FC", 1, (2,), (3,)),
    )
    graph = Graph(tuple(tensors), ops, (0,), (3,))
    assert aliases_for(graph, (0, 1, 2), op_traits(graph)) == {}


def _profile_by_recomputing(graph, order, groups, root, host, offset, staging) -> list[int]:  # type: ignore[no-untyped-def]
    """What `_trial_profile` computes incrementally: rebuild every buffer after the move."""
    scratch = dict(groups.scratch)
    extra = dict(groups.staging)
    if staging is not None:
        extra[staging[0]] = staging[1]
    for op_index, nbytes in extra.items():
        scratch[op_index] = scratch.get(op_index, 0) + nbytes
    aliases = {**groups.aliases, root: (host, offset)}
    buffers = activation_buffers(graph, order, scratch, aliases, profiles=groups.profiles)
    return live_bytes_per_step(buffers, len(order))


REAL_FOR_PEAK_CHECK = [
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "tflm_person_detect_int8",
    "mcunet_vww_mixed",
    "st_yamnet_aed_int8",
]


def _graph_for_peak_check(name: str) -> Graph:
    if name in REAL_FOR_PEAK_CHECK:
        if not SHARED_MODELS.is_dir():
            pytest.skip("../shared/models not present")
        return import_model((SHARED_MODELS / f"{name}.tflite").read_bytes(), source=name)
    return dict(benchmark_suite())[name]()


@pytest.mark.parametrize("profiles", [False, True])
@pytest.mark.parametrize("name", [n for n, _ in benchmark_suite()] + REAL_FOR_PEAK_CHECK)
def test_incremental_peak_check_equals_recomputing(
    name: str, profiles: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mcugen.plan.alias_groups as alias_groups

    graph = _graph_for_peak_check(name)
    incremental = alias_groups.trial_profile
    trials = []

    def checked(order, groups, root, host, offset, staging) -> list[int]:  # type: ignore[no-untyped-def]
        fast = incremental(order, groups, root, host, offset, staging)
        slow = _profile_by_recomputing(graph, order, groups, root, host, offset, staging)
        trials.append(staging is not None)
        assert fast == slow, f"move {root} -> {host}+{offset}, staging {staging}"
        return fast

    monkeypatch.setattr(alias_groups, "trial_profile", checked)
    for order in (tuple(range(len(graph.operators))), highest_ready_first(graph)):
        aliases_for(graph, order, op_traits(graph), profiles=profiles)
    assert trials


# --- the extent of a shared buffer --------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 12), st.integers(0, 6), st.integers(1, 300), st.integers(0, 200)),
        min_size=1,
        max_size=5,
    )
)
def test_group_extent_follows_the_live_members_step_by_step(
    members: list[tuple[int, int, int, int]],
) -> None:
    """`group_extent` against a step-by-step recomputation: members (first, length, bytes,
    offset) of one shared buffer."""
    tensors = tuple(Tensor(i, f"t{i}", (n,), "int8") for i, (_, _, n, _) in enumerate(members))
    graph = Graph(tensors, (), (), ())
    life = {i: (f, f + d) for i, (f, d, _, _) in enumerate(members)}
    placed = [(i, off) for i, (_, _, _, off) in enumerate(members)]
    size, first, last, profile = group_extent(graph, life, placed, profiles=True)
    runs = profile or ((first, last, size),)
    for step in range(first, last + 1):
        reach = max(
            (off + members[i][2] for i, off in placed if life[i][0] <= step <= life[i][1]),
            default=0,
        )
        at = [s for f, la, s in runs if f <= step <= la]
        assert at == ([align_up(reach)] if reach else []), step
    assert size == max(s for _, _, s in runs)
