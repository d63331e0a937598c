"""Gradients through AVERAGE_POOL_2D, MAX_POOL_2D, MEAN, PAD, CONCATENATION and MUL against JAX
(tests/jax_reference.py), on the host build.

Each case is a small float model: input -> FULLY_CONNECTED (trained) -> RESHAPE -> the operator
under test -> RESHAPE -> FULLY_CONNECTED (trained) -> SOFTMAX, so the first layer's gradients
flow through the operator's backward operators. Its training graph accumulates two samples per
update; after one sample each accumulator holds that sample's gradient, compared with jax.grad
of the same float computation within 1e-5 relative (of the largest gradient of the tensor).
Inputs are continuous random values, so no max-pool window has tied taps."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_reference import assert_host_matches_jax

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from support import FULL_SWEEP, pool_window

#: each example builds and runs the host training code: 9 under MCUGEN_FULL_SWEEP=1
EXAMPLES = settings(max_examples=9 if FULL_SWEEP else 5, deadline=None)
DEPTH, CLASSES = 5, 3
SAME, VALID = 0, 1
ACTS = st.sampled_from([0, 1, 2, 3])
SIZES = st.integers(1, 7)
CHANNELS = st.integers(1, 6)
#: (input shape, filter (h, w), strides (h, w), padding)
Window = tuple[tuple[int, ...], tuple[int, int], tuple[int, int], int]


def assert_gradients_match(model: Graph, seed: int) -> None:
    """Every parameter's gradient on the host equals jax.grad's, for random inputs and label."""
    rng = np.random.default_rng(seed + 1)
    inputs = [rng.normal(0, 1.0, model.tensors[t].shape).astype(np.float32) for t in model.inputs]
    label = np.array([int(rng.integers(CLASSES))])
    tg = build_training_graph(model, TrainOptions(trainable="all", accumulate=2))
    assert_host_matches_jax(tg, inputs, label)


class Net:
    """A float model under construction: `trained(shape)` gives an activation of `shape` computed
    by a trained FULLY_CONNECTED from the model input; `finish(z)` adds the classifier head."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.b = GraphBuilder()
        self.x = self.b.input((1, DEPTH), "float32")

    def shape(self, t: int) -> tuple[int, ...]:
        return self.b.tensors[t].shape

    def const(self, shape: tuple[int, ...]) -> int:
        return self.b.const(self.rng.normal(0, 1.0, shape).astype(np.float32))

    def reshape(self, t: int, shape: tuple[int, ...]) -> int:
        y = self.b.activation(shape, "float32")
        self.b.op("RESHAPE", [t, self.b.const(np.array(shape, np.int32))], [y])
        return y

    def dense(self, t: int, units: int) -> int:
        width = math.prod(self.shape(t))
        # scaled as a usual initialisation: logits of order 1. Logits of order 10 saturate the
        # softmax, which turns the forward pass's float32 rounding (1e-6 of a 455-term sum) into
        # a relative error of the loss gradient above RTOL in any float32 implementation.
        scale = 1.0 / math.sqrt(width)
        w = self.b.const(self.rng.normal(0, scale, (units, width)).astype(np.float32))
        bias = self.b.const(self.rng.normal(0, 0.1, units).astype(np.float32))
        y = self.b.activation((1, units), "float32")
        self.b.op("FULLY_CONNECTED", [t, w, bias], [y], fused_activation_function=0)
        return y

    def trained(self, shape: tuple[int, ...]) -> int:
        return self.reshape(self.dense(self.x, math.prod(shape)), shape)

    def op(self, opcode: str, inputs: list[int], shape: tuple[int, ...], **options: Any) -> int:
        y = self.b.activation(shape, "float32")
        self.b.op(opcode, inputs, [y], **options)
        return y

    def finish(self, z: int) -> Graph:
        logits = self.dense(self.reshape(z, (1, math.prod(self.shape(z)))), CLASSES)
        probs = self.b.activation((1, CLASSES), "float32")
        self.b.op("SOFTMAX", [logits], [probs], beta=1.0)
        self.b.output(probs)
        return self.b.graph()


@st.composite
def windows(draw: st.DrawFn) -> Window:
    """(input shape, filter, strides, padding); a VALID filter fits the image."""
    shape = (1, draw(SIZES), draw(SIZES), draw(CHANNELS))
    padding = draw(st.sampled_from([SAME, VALID]))
    filt = [draw(st.integers(1, 4)) for _ in range(2)]
    if padding == VALID:
        filt = [min(f, shape[1 + i]) for i, f in enumerate(filt)]
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    return shape, (filt[0], filt[1]), stride, padding


def pool_model(
    opcode: str,
    seed: int,
    window: Window,
    act: int,
) -> Graph:
    shape, filt, stride, padding = window
    net = Net(seed)
    h = net.trained(shape)
    out_hw, options = pool_window(shape, filt, stride, padding, act)
    y = net.op(opcode, [h], (1, out_hw[0], out_hw[1], shape[3]), **options)
    return net.finish(y)


@pytest.mark.parametrize("opcode", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@EXAMPLES
@given(seed=st.integers(0, 10_000), window=windows(), act=ACTS)
def test_pool_matches_jax(opcode: str, seed: int, window: Window, act: int) -> None:
    assert_gradients_match(pool_model(opcode, seed, window, act), seed)


@EXAMPLES
@given(
    seed=st.integers(0, 10_000),
    hw=st.tuples(SIZES, SIZES),
    channels=CHANNELS,
    axes=st.sampled_from([(1, 2), (-3, -2), (3,), (2, 3), (1,), (0, 1, 2, 3)]),
    keep_dims=st.booleans(),
)
def test_mean_matches_jax(
    seed: int, hw: tuple[int, int], channels: int, axes: tuple[int, ...], keep_dims: bool
) -> None:
    shape = (1, *hw, channels)
    reduced = {a % 4 for a in axes}
    kept = [1 if i in reduced else d for i, d in enumerate(shape) if keep_dims or i not in reduced]
    net = Net(seed)
    h = net.trained(shape)
    axis = net.b.const(np.array(axes, np.int32))
    y = net.op("MEAN", [h, axis], tuple(kept) or (1,), keep_dims=keep_dims)
    assert_gradients_match(net.finish(y), seed)


@EXAMPLES
@given(
    seed=st.integers(0, 10_000),
    hw=st.tuples(SIZES, SIZES),
    channels=CHANNELS,
    pads=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=4, max_size=4),
    value=st.sampled_from([None, 0.75]),
)
def test_pad_matches_jax(
    seed: int,
    hw: tuple[int, int],
    channels: int,
    pads: list[tuple[int, int]],
    value: float | None,
) -> None:
    """Asymmetric paddings of every axis (the batch's at most 1 on each side); PADV2 with a
    constant pad value."""
    shape = (1, *hw, channels)
    pads[0] = (min(pads[0][0], 1), min(pads[0][1], 1))
    net = Net(seed)
    h = net.trained(shape)
    inputs = [h, net.b.const(np.array(pads, np.int32))]
    if value is not None:
        inputs.append(net.b.const(np.array([value], np.float32)))
    padded = tuple(d + lo + hi for d, (lo, hi) in zip(shape, pads, strict=True))
    y = net.op("PAD" if value is None else "PADV2", inputs, padded)
    assert_gradients_match(net.finish(y), seed)


@EXAMPLES
@given(
    seed=st.integers(0, 10_000),
    hw=st.tuples(SIZES, SIZES),
    channels=CHANNELS,
    axis=st.sampled_from([3, -1, 2, -2]),
    kinds=st.lists(st.sampled_from(["trained", "const", "input", "same"]), min_size=1, max_size=2),
    sizes=st.lists(st.integers(1, 4), min_size=2, max_size=2),
    first=st.integers(0, 2),
)
def test_concatenation_matches_jax(
    seed: int,
    hw: tuple[int, int],
    channels: int,
    axis: int,
    kinds: list[str],
    sizes: list[int],
    first: int,
) -> None:
    """2 or 3 inputs along channels or width: a trained one (at position `first`) and others
    that are trained too, constants, model inputs, or the trained one again."""
    shape = (1, *hw, channels)
    net = Net(seed)
    h = net.trained(shape)
    parts = []
    for kind, size in zip(kinds, sizes, strict=False):
        part = list(shape)
        part[axis] = size
        if kind == "trained":
            parts.append(net.trained(tuple(part)))
        elif kind == "const":
            parts.append(net.const(tuple(part)))
        elif kind == "input":
            parts.append(net.b.input(tuple(part), "float32"))
        else:
            parts.append(h)
    parts.insert(min(first, len(parts)), h)
    out = list(shape)
    out[axis] = sum(net.shape(t)[axis] for t in parts)
    y = net.op("CONCATENATION", parts, tuple(out), axis=axis, fused_activation_function=0)
    assert_gradients_match(net.finish(y), seed)


@EXAMPLES
@given(
    seed=st.integers(0, 10_000),
    shape=st.sampled_from([(1, 3, 5, 3), (1, 1, 7, 6), (1, 10), (1, 2, 2, 5)]),
    other=st.sampled_from(["trained", "const", "input", "square", "broadcast"]),
    swap=st.booleans(),
    act=ACTS,
)
def test_mul_matches_jax(
    seed: int, shape: tuple[int, ...], other: str, swap: bool, act: int
) -> None:
    """A trained factor times another trained one, a constant, a model input, itself, or a
    constant broadcast along the last axis; either order; every fused activation."""
    net = Net(seed)
    h = net.trained(shape)
    factor = {
        "trained": lambda: net.trained(shape),
        "const": lambda: net.const(shape),
        "input": lambda: net.b.input(shape, "float32"),
        "square": lambda: h,
        "broadcast": lambda: net.const((shape[-1],)),
    }[other]()
    inputs = [factor, h] if swap else [h, factor]
    y = net.op("MUL", inputs, shape, fused_activation_function=act)
    assert_gradients_match(net.finish(y), seed)


def test_broadcasting_mul_is_refused() -> None:
    """A factor that needs a gradient and broadcasts is a one-line error naming MUL."""
    net = Net(0)
    small, big = net.trained((1, 1, 1, 3)), net.trained((1, 2, 2, 3))
    y = net.op("MUL", [small, big], (1, 2, 2, 3), fused_activation_function=0)
    with pytest.raises(UnsupportedError, match="broadcasting MUL"):
        build_training_graph(net.finish(y), TrainOptions(trainable="all", accumulate=2))
