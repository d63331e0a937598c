"""Aliased models (views, in-place element-wise operators, PAD and convolutions, concatenation as
a no-op, irregular graphs in another order): the arena shrinks and the generated C stays bit-exact
with TFLM on the original model."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
import pytest

from mcugen.codegen.lower.conv_2d import conv_staging_bytes
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.plan.buffers import live_bytes_per_step
from support import (
    NONE,
    RELU,
    RELU6,
    SAME,
    VALID,
    Net,
    aliased_tensors,
    arenas,
    assert_matches_tflm,
    generate_optimized,
    highest_ready_first,
)
from testgraphs import benchmark_suite

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
