"""Gradients of the convolution backward kernels (conv_2d_grad.c, depthwise_conv_2d_grad.c)
against JAX (tests/jax_reference.py), on the host build.

As tests/train/test_gradients.py: each case builds a small model and its training graph
(accumulating two samples per update, so that after one sample each parameter's accumulator holds
that sample's gradient), runs one sample, reads the accumulators back and compares them with
jax.grad of the same float computation, within 1e-5 relative (of the largest gradient of the
tensor). Random windows: strides 1-3 (h and w apart), SAME and VALID, dilations 1-2, kernels 1x1
to 5x5, odd images, channel counts that are not multiples of 4, grouped CONV_2D, depth
multipliers 1-3, the four fused activations, bias or none. Chains of two convolutions carry dx of
the second into dW of the first; the head is FULLY_CONNECTED + SOFTMAX or a per-pixel SOFTMAX.
An int8 model trains its last convolution and FULLY_CONNECTED over its int8 prefix (TFLM). The
backward operators' lowerings take the forward window and refuse options their shapes deny.
The weight update, in the kernels of CONV_2D and FULLY_CONNECTED and in McugenSgd, is checked
against PyTorch's SGD formula on JAX's gradients (the last section)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_reference import assert_host_matches_jax, float_part_grads, host_state

from mcugen.codegen.lower import fields, lower
from mcugen.codegen.quant import FLOAT_MAX, out_size
from mcugen.errors import McugenError
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph, Operator
from mcugen.train.graph import TrainingGraph, build_training_graph
from mcugen.train.options import TrainOptions
from support import FULL_SWEEP

#: each example builds and runs the host training code: 8 under MCUGEN_FULL_SWEEP=1
EXAMPLES = settings(max_examples=8 if FULL_SWEEP else 5, deadline=None)
SAME, VALID = 0, 1


def assert_gradients_match(
    model: Graph, trainable: str, x: np.ndarray, label: np.ndarray
) -> TrainingGraph:
    tg = build_training_graph(model, TrainOptions(trainable=trainable, accumulate=2))
    assert_host_matches_jax(tg, [x], label)
    return tg


# --- float models ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One convolution: CONV_2D (`channels` outputs in `groups` groups) or DEPTHWISE_CONV_2D
    (`channels` is the depth multiplier)."""

    kind: str
    channels: int
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    padding: int
    act: int
    bias: bool
    groups: int = 1

    def out_hwc(self, in_hwc: tuple[int, int, int]) -> tuple[int, int, int]:
        hw = [
            out_size(self.padding, in_hwc[i], self.kernel[i], self.stride[i], self.dilation[i])
            for i in (0, 1)
        ]
        depth = self.channels * (in_hwc[2] if self.kind == "DEPTHWISE_CONV_2D" else 1)
        return hw[0], hw[1], depth

    def filter_shape(self, in_c: int) -> tuple[int, int, int, int]:
        if self.kind == "DEPTHWISE_CONV_2D":
            return (1, *self.kernel, in_c * self.channels)
        return (self.channels, *self.kernel, in_c // self.groups)

    def options(self) -> dict[str, int]:
        options = {
            "padding": self.padding,
            "stride_h": self.stride[0],
            "stride_w": self.stride[1],
            "dilation_h_factor": self.dilation[0],
            "dilation_w_factor": self.dilation[1],
            "fused_activation_function": self.act,
        }
        if self.kind == "DEPTHWISE_CONV_2D":
            options["depth_multiplier"] = self.channels
        return options


@st.composite
def layers(draw: st.DrawFn, kind: str, in_hwc: tuple[int, int, int]) -> Layer:
    """A random convolution over an `in_hwc` image (VALID only where the window fits it)."""
    kernel = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    fits = all((kernel[i] - 1) * dilation[i] + 1 <= in_hwc[i] for i in (0, 1))
    groups = 1
    if kind == "CONV_2D":
        groups = draw(st.sampled_from([g for g in (1, 2, 3) if in_hwc[2] % g == 0]))
        channels = groups * draw(st.integers(1, 7 // groups))
    else:
        channels = draw(st.integers(1, 3))
    return Layer(
        kind=kind,
        channels=channels,
        kernel=kernel,
        stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        dilation=dilation,
        padding=draw(st.sampled_from([SAME, VALID] if fits else [SAME])),
        act=draw(st.sampled_from([0, 1, 2, 3])),
        bias=draw(st.booleans()),
        groups=groups,
    )


def conv_model(
    seed: int, in_hwc: tuple[int, int, int], convs: list[Layer], classes: int | None
) -> tuple[Graph, tuple[int, ...]]:
    """A float32 model: the convolutions in a chain, then FULLY_CONNECTED to `classes` and
    SOFTMAX, or (`classes` None) SOFTMAX over the last convolution's channels at every pixel.
    Returns the model and its softmax input's shape."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    h = b.input((1, *in_hwc), "float32")
    shape = in_hwc
    for layer in convs:
        filt = layer.filter_shape(shape[2])
        fan_in = filt[1] * filt[2] * (1 if layer.kind == "DEPTHWISE_CONV_2D" else filt[3])
        w = b.const(rng.normal(0, 1.5 / fan_in**0.5, filt).astype(np.float32))
        shape = layer.out_hwc(shape)
        bias = b.const(rng.normal(0, 0.3, shape[2]).astype(np.float32)) if layer.bias else -1
        y = b.activation((1, *shape), "float32")
        b.op(layer.kind, [h, w, bias], [y], **layer.options())
        h = y
    logits_shape: tuple[int, ...] = (1, *shape)
    if classes is not None:
        depth = int(np.prod(shape))
        w = b.const(rng.normal(0, depth**-0.5, (classes, depth)).astype(np.float32))
        bias = b.const(rng.normal(0, 0.1, classes).astype(np.float32))
        logits_shape = (1, classes)
        y = b.activation(logits_shape, "float32")
        b.op("FULLY_CONNECTED", [h, w, bias], [y], fused_activation_function=0)
        h = y
    probs = b.activation(logits_shape, "float32")
    b.op("SOFTMAX", [h], [probs], beta=1.0)
    b.output(probs)
    return b.graph(), logits_shape


def run_case(
    seed: int, in_hwc: tuple[int, int, int], convs: list[Layer], fc: bool, trainable: str = "all"
) -> TrainingGraph:
    """The model's gradients against JAX on a seeded sample and label. A per-pixel SOFTMAX over
    one channel has no gradient, so such a chain ends in FULLY_CONNECTED."""
    shape = in_hwc
    for layer in convs:
        shape = layer.out_hwc(shape)
    model, logits = conv_model(seed, in_hwc, convs, 4 if fc or shape[2] < 2 else None)
    rng = np.random.default_rng(seed + 1)
    x = rng.normal(0, 2.0, (1, *in_hwc)).astype(np.float32)
    label = rng.integers(0, logits[-1], int(np.prod(logits[:-1])))
    return assert_gradients_match(model, trainable, x, label)


def grad_ops(tg: TrainingGraph) -> list[dict[str, object]]:
    """The options of the training graph's convolution backward operators, in order."""
    codes = ("McugenConv2DGrad", "McugenDepthwiseConv2DGrad")
    return [dict(op.options) for op in tg.graph.operators if op.custom_code in codes]


def grad_flags(options: dict[str, object]) -> tuple[bool, bool, bool]:
    """(trains W, has db, has dx) of a backward operator's options: CONV_2D's updates W itself
    (`update_w`), DEPTHWISE_CONV_2D's writes dW (`has_dw`)."""
    trains = bool(options.get("update_w", False) or options.get("has_dw", False))
    return trains, bool(options["has_db"]), bool(options["has_dx"])


images = st.tuples(st.sampled_from([7, 8, 9, 11]), st.sampled_from([7, 9, 10, 11]))
KINDS = ("CONV_2D", "DEPTHWISE_CONV_2D")


@pytest.mark.parametrize("kind", KINDS)
@EXAMPLES
@given(data=st.data(), seed=st.integers(0, 10_000), hw=images, depth=st.integers(1, 7))
def test_one_layer_matches_jax(
    kind: str, data: st.DataObject, seed: int, hw: tuple[int, int], depth: int
) -> None:
    in_hwc = (*hw, depth)
    layer = data.draw(layers(kind, in_hwc))
    run_case(seed, in_hwc, [layer], fc=data.draw(st.booleans()))


@EXAMPLES
@given(
    data=st.data(),
    seed=st.integers(0, 10_000),
    hw=images,
    depth=st.integers(1, 6),
    kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
    first_only=st.booleans(),
)
def test_chain_of_two_convolutions_matches_jax(
    data: st.DataObject,
    seed: int,
    hw: tuple[int, int],
    depth: int,
    kinds: tuple[str, str],
    first_only: bool,
) -> None:
    """dx of the second convolution reaches dW of the first; trained alone, the first leaves the
    second a backward operator with dx only."""
    in_hwc = (*hw, depth)
    first = data.draw(layers(kinds[0], in_hwc))
    second = data.draw(layers(kinds[1], first.out_hwc(in_hwc)))
    tg = run_case(
        seed, in_hwc, [first, second], data.draw(st.booleans()), "0" if first_only else "all"
    )
    flags = [grad_flags(o) for o in grad_ops(tg)]
    assert flags == [
        (not first_only, second.bias and not first_only, True),
        (True, first.bias, False),
    ]


# --- an int8 model: the frozen prefix stays int8 --------------------------------------------


#: (filter shape, output shape, options) of the int8 model's convolutions.
INT8_CONVS = {
    "first": ((5, 3, 3, 3), (1, 9, 7, 5), {"padding": SAME, "fused_activation_function": 1}),
    "CONV_2D": (
        (6, 3, 2, 5),
        (1, 4, 3, 6),
        {"padding": VALID, "stride_h": 2, "stride_w": 2, "fused_activation_function": 3},
    ),
    "DEPTHWISE_CONV_2D": (
        (1, 3, 3, 10),
        (1, 5, 3, 10),
        {
            "padding": SAME,
            "stride_h": 2,
            "stride_w": 3,
            "depth_multiplier": 2,
            "fused_activation_function": 1,
        },
    ),
}


def int8_conv(
    b: GraphBuilder, rng: np.random.Generator, h: int, in_scale: float, kind: str, key: str
) -> int:
    """An int8 convolution (per-channel weights, int32 bias) of INT8_CONVS[key] reading `h`."""
    filt, out, options = INT8_CONVS[key]
    axis = 3 if kind == "DEPTHWISE_CONV_2D" else 0
    scales = rng.uniform(0.002, 0.005, filt[axis])
    w = b.const(rng.integers(-127, 128, filt, dtype=np.int8), scale=scales, axis=axis)
    bias = b.const(rng.integers(-500, 500, filt[axis], dtype=np.int32), scale=in_scale * scales)
    y = b.activation(out, "int8", scale=0.08, zero_point=-20)
    window = {"stride_h": 1, "stride_w": 1, "dilation_h_factor": 1, "dilation_w_factor": 1}
    b.op(kind, [h, w, bias], [y], **(window | options))
    return y


def int8_model(seed: int, trained: str) -> Graph:
    """int8 throughout: CONV_2D, then `trained` (CONV_2D or DEPTHWISE_CONV_2D), both with
    per-channel weights, FULLY_CONNECTED and SOFTMAX."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, 9, 7, 3), "int8", scale=0.05, zero_point=-3)
    h = int8_conv(b, rng, x, 0.05, "CONV_2D", "first")
    h = int8_conv(b, rng, h, 0.08, trained, trained)
    depth = int(np.prod(INT8_CONVS[trained][1]))
    w = b.const(rng.integers(-127, 128, (4, depth), dtype=np.int8), scale=0.002)
    bias = b.const(rng.integers(-300, 300, 4, dtype=np.int32), scale=0.08 * 0.002)
    logits = b.activation((1, 4), "int8", scale=0.15, zero_point=3)
    b.op("FULLY_CONNECTED", [h, w, bias], [logits], fused_activation_function=0)
    probs = b.activation((1, 4), "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [logits], [probs], beta=1.0)
    b.output(probs)
    return b.graph()


@pytest.mark.parametrize("trained", KINDS)
def test_int8_model_trains_its_last_convolution_and_dense_layer(trained: str) -> None:
    """--trainable last:2: the first convolution stays int8 (TFLM computes what enters the float
    part, through its DEQUANTIZE); the last convolution and FULLY_CONNECTED train in float32."""
    model = int8_model(7, trained)
    rng = np.random.default_rng(8)
    x = rng.integers(-128, 128, (1, 9, 7, 3), dtype=np.int8)
    tg = assert_gradients_match(model, "last:2", x, np.array([2]))
    assert tg.trainable == (1, 2)
    assert [p.role for p in tg.params] == ["weights", "bias", "weights", "bias"]
    assert [grad_flags(o) for o in grad_ops(tg)] == [(True, True, False)]
    opcodes = [op.opcode for op in tg.forward.operators]
    assert opcodes[:3] == ["CONV_2D", "DEQUANTIZE", trained]


# --- lowering of the backward operators -----------------------------------------------------


def backward_operator(kind: str, **changes: object) -> tuple[Graph, Operator]:
    """A chain of two `kind` convolutions trained from the first: the training graph and its
    second backward operator (the first convolution's), with options `changes` applied."""
    layer = Layer(kind, 2, (3, 2), (2, 1), (1, 2), SAME, 1, True)
    model, _ = conv_model(0, (9, 7, 4), [layer, layer], 3)
    graph = build_training_graph(model, TrainOptions(trainable="all")).graph
    ops = [op for op in graph.operators if op.custom_code and op.custom_code.endswith("Conv2DGrad")]
    op = ops[1]
    return graph, replace(op, options=MappingProxyType(dict(op.options) | changes))


@pytest.mark.parametrize("kind", KINDS)
def test_backward_operator_takes_the_forward_window(kind: str) -> None:
    graph, op = backward_operator(kind)
    params = fields(lower(graph, op).params)
    # SAME over 9 x 7 with a 3 x 2 filter, strides (2, 1), dilations (1, 2): padding (1, 1)
    window = {"stride_h": 2, "stride_w": 1, "dilation_h": 1, "dilation_w": 2}
    assert {k: params[k] for k in window} == window
    assert (params["pad_h"], params["pad_w"]) == (1, 1)
    trains = params["update_w"] if kind == "CONV_2D" else params["has_dw"]
    assert (trains, params["has_db"], params["has_dx"]) == (1, 1, 0)
    assert (params["act_min_f"], params["act_max_f"]) == (0.0, FLOAT_MAX)
    if kind == "DEPTHWISE_CONV_2D":
        assert params["depth_multiplier"] == 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("changes", [{"stride_h": 3}, {"padding": VALID}, {"has_dx": True}])
def test_backward_operator_that_disagrees_with_its_shapes_is_refused(
    kind: str, changes: dict[str, object]
) -> None:
    graph, op = backward_operator(kind, **changes)
    with pytest.raises(McugenError):
        lower(graph, op)


# --- the weight update ----------------------------------------------------------------------
# The weight update against PyTorch's SGD formula on JAX's gradients, on the host build.
#
# A float model whose CONV_2D and FULLY_CONNECTED update their weights inside their backward
# kernels (one output channel at a time) and whose biases and DEPTHWISE_CONV_2D weights go through
# McugenSgd trains four samples, two per update, with momentum and weight decay. The reference
# takes jax.grad at the current weights for every sample and applies, in float32,
# g = (g1 + g2) / 2 + weight_decay w; m = momentum m + g; w = w - lr m. Every parameter's change
# after the two updates equals the reference's within 1e-4 of the largest change (the gradients
# agree within 1e-5; the second update's are taken at weights that differ by that much).

LAYERS = [
    Layer("CONV_2D", 4, (3, 3), (2, 1), (1, 1), SAME, 1, True),
    Layer("DEPTHWISE_CONV_2D", 2, (2, 3), (1, 1), (1, 2), VALID, 3, True),
]


@pytest.mark.parametrize(("momentum", "weight_decay"), [(0.9, 0.01), (0.0, 0.0)])
def test_sgd_updates_match_the_formula_on_jax_gradients(
    momentum: float, weight_decay: float
) -> None:
    model, _ = conv_model(5, (7, 6, 3), LAYERS, 4)
    options = TrainOptions(
        trainable="all",
        learning_rate=0.05,
        momentum=momentum,
        weight_decay=weight_decay,
        accumulate=2,
    )
    tg = build_training_graph(model, options)
    codes = [op.custom_code for op in tg.graph.operators if op.custom_code]
    assert codes.count("McugenSgd") == 4  # three biases and the depthwise weights
    rng = np.random.default_rng(6)
    xs = [rng.normal(0, 1.0, (1, 7, 6, 3)).astype(np.float32) for _ in range(4)]
    labels = [np.array([i % 4], np.int32) for i in range(4)]
    applies = [0, 2, 0, 2]
    _, ours = host_state(
        tg, [[x, y, np.array([a], np.int32)] for x, y, a in zip(xs, labels, applies, strict=True)]
    )

    start = {p.tensor: tg.graph.tensors[p.tensor].array().reshape(-1) for p in tg.params}
    w = {t: v.copy() for t, v in start.items()}
    m = {t: np.zeros_like(v) for t, v in start.items()}
    f32 = np.float32
    for first in (0, 2):
        g1 = float_part_grads(tg, {tg.forward.inputs[0]: xs[first]}, labels[first], w)[1]
        g2 = float_part_grads(tg, {tg.forward.inputs[0]: xs[first + 1]}, labels[first + 1], w)[1]
        for t in w:
            g = (g1[t].reshape(-1) + g2[t].reshape(-1)) / f32(2)
            g = g + f32(weight_decay) * w[t]
            if momentum:
                m[t] = f32(momentum) * m[t] + g
                g = m[t]
            w[t] = w[t] - f32(0.05) * g
    for p in tg.params:
        change, expected = (
            ours[p.tensor].reshape(-1) - start[p.tensor],
            w[p.tensor] - start[p.tensor],
        )
        worst = float(np.max(np.abs(change - expected)))
        assert worst <= 1e-4 * float(np.max(np.abs(expected))), f"{p.role} of operator {p.op}"
        if momentum:
            assert np.allclose(ours[p.momentum].reshape(-1), m[p.tensor], rtol=1e-4, atol=1e-7)
        assert not np.any(ours[p.accumulator])  # cleared by the update
