"""Aliasing (views, in-place element-wise operators and PAD, concatenation as a no-op): the arena
shrinks, plans validate, no tensor is clobbered while it is still needed, and the generated C stays
bit-exact with TFLM on the original model."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.codegen.lower import op_traits
from mcugen.codegen.lower.conv_2d import conv_staging_bytes
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.plan.aliasing import aliases_for
from mcugen.plan.buffers import activation_buffers, live_bytes_per_step
from mcugen.plan.layout.greedy import greedy_by_size
from mcugen.plan.memory_plan import MemoryPlan
from support import (
    NONE,
    RELU,
    RELU6,
    SAME,
    SHARED_MODELS,
    VALID,
    Net,
    arenas,
    assert_matches_tflm,
    generate_optimized,
)
from testgraphs import benchmark_suite


def aliased_tensors(plan: MemoryPlan) -> set[int]:
    return {t for b in plan.buffers for t, _ in b.members if t != b.tensor}


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


# --- generated C against TFLM ------------------------------------------------------------------


def view_chain(dtype: str) -> bytes:
    """conv -> RESHAPE -> EXPAND_DIMS -> SQUEEZE -> conv: every view aliases."""
    n = Net(dtype)
    a = n.conv(n.input((1, 6, 6, 4)), 8)
    r = n.op("RESHAPE", [a], (1, 36, 8), new_shape=[1, 36, 8])
    e = n.op("EXPAND_DIMS", [r, n.b.const(np.array([2], np.int32))], (1, 36, 1, 8))
    s = n.op("SQUEEZE", [e], (1, 36, 8), squeeze_dims=[2])
    back = n.op("RESHAPE", [s], (1, 6, 6, 8), new_shape=[1, 6, 6, 8])
    return n.model(n.conv(back, 4))


def add_chain(dtype: str) -> bytes:
    """Residual additions and activations while the input stays live: each can overwrite an
    input that dies there (MUL(s, s) cannot: both operands share storage)."""
    n = Net(dtype)
    shape = (1, 8, 8, 8)
    x = n.input(shape)
    a, b = n.conv(x, 8), n.conv(x, 8, q=(0.12, -1))
    s = n.op("ADD", [a, b], shape, fused_activation_function=NONE)
    bias = n.b.const(np.arange(8, dtype=np.int8 if dtype == "int8" else np.float32), **n.q(0.05, 0))
    s = n.op("ADD", [bias, s], shape, q=(0.13, 1), fused_activation_function=RELU)
    s = n.op("SUB", [s, n.conv(s, 8)], shape, fused_activation_function=NONE)
    s = n.op("MUL", [s, s], shape, q=(0.2, -4), fused_activation_function=NONE)
    r = n.op("RELU6", [s], shape)
    return n.model(n.op("ADD", [r, x], shape, q=(0.15, 0), fused_activation_function=NONE))


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("build", [view_chain, add_chain], ids=lambda f: f.__name__)
def test_aliased_models_match_tflm_and_shrink(build: Any, dtype: str) -> None:
    model = build(dtype)
    plain, optimized = arenas(model)
    assert optimized.arena_bytes < plain.arena_bytes
    assert aliased_tensors(optimized)
    assert_matches_tflm(model, samples=3, generate_fn=generate_optimized)


#: One element-wise operator between two convolutions: (opcode, int8 output quantization, options).
ELEMENTWISE = [
    ("RELU", (0.1, -128), {}),
    ("RELU6", (0.1, 2), {}),
    ("LEAKY_RELU", (0.08, 5), {"alpha": 0.2}),
    ("HARD_SWISH", (0.06, -20), {}),
    ("LOGISTIC", (1 / 256, -128), {}),
    ("TANH", (1 / 128, 0), {}),
    ("QUANTIZE", (0.03, 7), {}),
    ("MAXIMUM", (0.1, 2), {}),
    ("MINIMUM", (0.1, 2), {}),
    ("PRELU", (0.09, 1), {}),
]


def elementwise_model(dtype: str, opcode: str, q: tuple[float, int], options: dict) -> bytes:
    """conv -> OPCODE -> conv while the model input stays live (the operator sets the peak)."""
    n = Net(dtype, seed=3)
    x = n.input((1, 5, 7, 6))
    a = n.conv(x, 6, kernel=3, q=(0.1, 2))
    inputs = [a]
    numbers = np.int8 if dtype == "int8" else np.float32
    if opcode in ("MAXIMUM", "MINIMUM"):
        inputs.append(n.b.const(np.full((1, 1, 1, 6), 3, numbers), **n.q(0.1, 2)))
    if opcode == "PRELU":
        alpha = n.rng.integers(-50, 50, (1, 1, 6)) if dtype == "int8" else n.rng.normal(size=6)
        inputs.append(n.b.const(np.asarray(alpha, numbers).reshape(1, 1, 6), **n.q(0.01, 0)))
    y = n.op(opcode, inputs, (1, 5, 7, 6), q=q, **options)
    return n.model(n.conv(y, 2, kernel=3), n.conv(x, 2))


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize(("opcode", "q", "options"), ELEMENTWISE, ids=[e[0] for e in ELEMENTWISE])
def test_each_in_place_operator_matches_tflm(
    dtype: str, opcode: str, q: tuple[float, int], options: dict
) -> None:
    if dtype == "float32" and opcode == "QUANTIZE":
        pytest.skip("float32 -> float32 QUANTIZE does not exist")
    model = elementwise_model(dtype, opcode, q, options)
    plain, optimized = arenas(model)
    graph = import_model(model, source="test")
    op = next(op for op in graph.operators if op.opcode == opcode)
    assert op.outputs[0] in aliased_tensors(optimized)
    assert optimized.arena_bytes < plain.arena_bytes
    assert_matches_tflm(model, samples=3, generate_fn=generate_optimized)


def concat_model(dtype: str, nested: bool = False) -> bytes:
    """Convolutions concatenated along H (N = 1): a no-op once the producers write in place."""
    n = Net(dtype, seed=5)
    x = n.input((1, 6, 5, 4))
    a = n.conv(x, 8)
    b = n.conv(x, 8, kernel=3, q=(0.1, 2))
    parts = [a, b]
    if nested:
        c = n.op("RELU", [n.conv(x, 8)], (1, 6, 5, 8))
        inner = n.op("CONCATENATION", [b, c], (1, 12, 5, 8), axis=1, fused_activation_function=0)
        parts = [a, inner]
    h = sum(n.shape(t)[1] for t in parts)
    z = n.op("CONCATENATION", parts, (1, h, 5, 8), axis=1, fused_activation_function=0)
    return n.model(n.conv(z, 3))


@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_concatenation_no_op_matches_tflm(dtype: str, nested: bool) -> None:
    model = concat_model(dtype, nested)
    plain, optimized = arenas(model)
    graph = import_model(model, source="test")
    cats = [op for op in graph.operators if op.opcode == "CONCATENATION"]
    assert all(set(op.inputs) <= aliased_tensors(optimized) for op in cats)
    assert optimized.arena_bytes < plain.arena_bytes
    assert_matches_tflm(model, samples=3, generate_fn=generate_optimized)


def pad_model(dtype: str, pads: list[tuple[int, int]], then: str = "MAX_POOL_2D") -> bytes:
    """conv -> PAD -> max pool (or conv) while the model input stays live: the PAD sets the peak."""
    n = Net(dtype, seed=9)
    x = n.input((1, 7, 6, 4))
    a = n.conv(x, 4, kernel=3, q=(0.1, 2))
    shape = tuple(d + lo + hi for d, (lo, hi) in zip(n.shape(a), pads, strict=True))
    p = n.op("PAD", [a, n.b.const(np.array(pads, np.int32))], shape)
    if then == "MAX_POOL_2D":
        pool = {"filter_height": 3, "filter_width": 3, "stride_h": 2, "stride_w": 2}
        oh, ow = (shape[1] - 3) // 2 + 1, (shape[2] - 3) // 2 + 1
        y = n.op("MAX_POOL_2D", [p], (1, oh, ow, shape[3]), padding=VALID, **pool)
    else:
        y = n.conv(p, 3, kernel=3, padding=VALID)
    return n.model(y, n.conv(x, 2))


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize(
    "pads",
    [
        [(0, 0), (1, 1), (1, 1), (0, 0)],
        [(0, 0), (3, 0), (0, 2), (1, 2)],
        [(0, 0), (0, 1), (0, 0), (0, 0)],
    ],
    ids=["hw", "hwc", "bottom"],
)
@pytest.mark.parametrize("then", ["MAX_POOL_2D", "CONV_2D"])
def test_pad_in_place_matches_tflm(dtype: str, pads: list[tuple[int, int]], then: str) -> None:
    model = pad_model(dtype, pads, then)
    plain, optimized = arenas(model, rewrites=False)
    graph = import_model(model, source="test")
    pad = next(op for op in graph.operators if op.opcode == "PAD")
    assert pad.outputs[0] in aliased_tensors(optimized) or pad.inputs[0] in aliased_tensors(
        optimized
    )
    # The PAD's own step shrinks by its input's bytes; the arena shrinks where that step is
    # the peak (a following 3x3 convolution's im2col scratch can set it instead), never grows.
    step = plain.order.index(pad.index) + 1
    before = live_bytes_per_step(plain.buffers, len(plain.order))[step]
    after = live_bytes_per_step(optimized.buffers, len(optimized.order))[step]
    assert after <= before - graph.tensors[pad.inputs[0]].nbytes
    assert optimized.arena_bytes <= plain.arena_bytes
    if then == "MAX_POOL_2D":
        assert optimized.arena_bytes < plain.arena_bytes
    gen = functools.partial(generate_optimized, rewrites=False)
    assert_matches_tflm(model, samples=3, generate_fn=gen)


def highest_ready_first(graph: Graph) -> tuple[int, ...]:
    """A topological order far from the stored one: always the ready operator of highest index."""
    ready = set(graph.inputs) | {t.index for t in graph.tensors if t.is_constant}
    left = set(range(len(graph.operators)))
    order: list[int] = []
    while left:
        runnable = [i for i in left if all(t < 0 or t in ready for t in graph.operators[i].inputs)]
        pick = max(runnable)
        order.append(pick)
        left.remove(pick)
        ready.update(graph.operators[pick].outputs)
    return tuple(order)


@pytest.mark.parametrize("name", ["randwire_ws12", "nas_cells3", "inception4"])
def test_irregular_graphs_in_another_order_match_tflm(name: str) -> None:
    """Aliasing depends on the order: generated graphs run in a non-stored order stay bit-exact."""
    graph = dict(benchmark_suite(quick=True))[name]()
    order = highest_ready_first(graph)
    assert order != tuple(range(len(graph.operators)))
    gen = functools.partial(generate_optimized, rewrites=False, order=order)
    assert aliased_tensors(gen(graph).plan)
    assert_matches_tflm(write_model(graph), samples=2, generate_fn=gen)


def conv_in_place_model(dtype: str, kind: str) -> bytes:
    """conv 3x3 -> the operator under test -> conv 3x3: the middle step sets the peak unless the
    operator writes over its input (aliasing.py step 5)."""
    n = Net(dtype, seed=13)
    a = n.conv(n.input((1, 9, 8, 3)), 8, kernel=3, q=(0.1, 2))
    if kind.startswith("dw"):
        stride, padding = (2, VALID) if kind == "dw_s2_valid" else (1, SAME)
        y = n.dwconv(a, kernel=3, stride=stride, padding=padding, act=RELU6)
        if kind == "dw_dilated":
            op = n.b.operators[-1]
            dilated = {**op.options, "dilation_h_factor": 2, "dilation_w_factor": 2}
            n.b.operators[-1] = dataclasses.replace(op, options=dilated)
    else:
        y = n.conv(a, {"pw_shrink": 4, "pw_same": 8, "pw_grow": 16}[kind], act=RELU)
    return n.model(n.conv(y, 2, kernel=3))


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize(
    "kind", ["dw_same", "dw_s2_valid", "dw_dilated", "pw_shrink", "pw_same", "pw_grow"]
)
def test_convolution_in_place_matches_tflm(dtype: str, kind: str) -> None:
    model = conv_in_place_model(dtype, kind)
    # reference kernels: the optimised 3x3 convolutions' scratch would move the peak to them
    plain, optimized = arenas(model, rewrites=False, kernels="reference")
    graph = import_model(model, source="test")
    middle = graph.operators[1]
    offsets = optimized.tensor_offsets()
    assert offsets[middle.outputs[0]] == offsets[middle.inputs[0]], "not run in place"
    staging = {b.scratch_of: b.size for b in optimized.buffers if b.scratch_of >= 0}
    assert staging.get(middle.index, 0) >= (conv_staging_bytes(graph, middle) or 1)
    if kind == "dw_s2_valid":  # the small output leaves the peak at the first convolution
        assert optimized.arena_bytes <= plain.arena_bytes
    else:
        assert optimized.arena_bytes < plain.arena_bytes
    gen = functools.partial(generate_optimized, rewrites=False)
    assert_matches_tflm(model, samples=3, generate_fn=gen)


def test_convolutions_that_cannot_run_in_place_are_left_alone() -> None:
    n = Net("int8", seed=2)
    x = n.input((1, 6, 6, 4))
    a = n.conv(x, 4, kernel=3)
    b = n.conv(a, 4, kernel=3)  # 3x3: its outputs need neighbouring input pixels
    c = n.conv(b, 4, stride=2)  # 1x1 stride 2: a different grid
    model = n.model(n.conv(c, 2))
    graph = import_model(model, source="test")
    # the 1x1 stride-1 one may: int8 stages two pixels (the optimised kernel's 2-row block)
    assert [conv_staging_bytes(graph, op) for op in graph.operators] == [None, None, None, 8]
    plan = generate_optimized(graph, rewrites=False).plan
    offsets = plan.tensor_offsets()
    assert all(offsets[op.outputs[0]] != offsets[op.inputs[0]] for op in graph.operators[:3])


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
