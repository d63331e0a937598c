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
backward operators' lowerings and the weight update: test_grad_conv_update.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_reference import assert_host_matches_jax

from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph
from mcugen.train.graph import TrainingGraph, build_training_graph
from mcugen.train.options import TrainOptions
from support import FULL_SWEEP, ConvLayer, float_conv_model

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


@st.composite
def layers(draw: st.DrawFn, kind: str, in_hwc: tuple[int, int, int]) -> ConvLayer:
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
    return ConvLayer(
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


def run_case(
    seed: int,
    in_hwc: tuple[int, int, int],
    convs: list[ConvLayer],
    fc: bool,
    trainable: str = "all",
) -> TrainingGraph:
    """The model's gradients against JAX on a seeded sample and label. A per-pixel SOFTMAX over
    one channel has no gradient, so such a chain ends in FULLY_CONNECTED."""
    shape = in_hwc
    for layer in convs:
        shape = layer.out_hwc(shape)
    model, logits = float_conv_model(seed, in_hwc, convs, 4 if fc or shape[2] < 2 else None)
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
