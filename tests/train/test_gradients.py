"""Gradients of the backward kernels against JAX (tests/jax_reference.py), on the host build.

Each case builds a small model, its training graph (accumulating two samples per update, so
that after one sample each parameter's accumulator holds exactly that sample's gradient), runs
one sample, reads the accumulators back and compares them with jax.grad of the same float
computation, within 1e-5 relative (of the largest gradient of the tensor)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_reference import assert_host_matches_jax

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph, Quantization, Tensor
from mcugen.train.builder import dequantized
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from support import FULL_SWEEP

#: each example builds and runs the host training code: 8 under MCUGEN_FULL_SWEEP=1
EXAMPLES = settings(max_examples=8 if FULL_SWEEP else 5, deadline=None)


def assert_gradients_match(model: Graph, trainable: str, x: np.ndarray, label: np.ndarray) -> None:
    tg = build_training_graph(model, TrainOptions(trainable=trainable, accumulate=2))
    assert_host_matches_jax(tg, [x], label)


def mlp(seed: int, depth: int, units: list[int], acts: list[int], residual: bool) -> Graph:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, depth), "float32")
    h, width = x, depth
    for i, (n, act) in enumerate(zip(units, acts, strict=True)):
        w = b.const(rng.normal(0, 0.5, (n, width)).astype(np.float32))
        bias = b.const(rng.normal(0, 0.1, n).astype(np.float32)) if i % 2 == 0 else -1
        y = b.activation((1, n), "float32")
        b.op("FULLY_CONNECTED", [h, w, bias], [y], fused_activation_function=act)
        if residual and n == width:
            z = b.activation((1, n), "float32")
            b.op("ADD", [y, h], [z])
            y = z
        h, width = y, n
    flat = b.activation((1, 1, width), "float32")
    b.op("RESHAPE", [h, b.const(np.array([1, 1, width], np.int32))], [flat])
    logits = b.activation((1, width), "float32")
    b.op("RESHAPE", [flat, b.const(np.array([1, width], np.int32))], [logits])
    probs = b.activation((1, width), "float32")
    b.op("SOFTMAX", [logits], [probs], beta=1.0)
    b.output(probs)
    return b.graph()


@EXAMPLES
@given(
    seed=st.integers(0, 10_000),
    depth=st.integers(1, 13),
    units=st.lists(st.integers(2, 9), min_size=1, max_size=3),
    acts=st.lists(st.sampled_from([0, 1, 2, 3]), min_size=3, max_size=3),
    residual=st.booleans(),
)
def test_fully_connected_chain_matches_jax(
    seed: int, depth: int, units: list[int], acts: list[int], residual: bool
) -> None:
    model = mlp(seed, depth, units, acts[: len(units)], residual)
    rng = np.random.default_rng(seed + 1)
    x = rng.normal(0, 1.0, (1, depth)).astype(np.float32)
    label = np.array([int(rng.integers(units[-1]))])
    assert_gradients_match(model, "all", x, label)


def test_a_bias_with_the_weights_channel_axis_dequantizes_along_its_only_axis() -> None:
    """Converters copy a depthwise's channel axis (3) onto its 1-D bias (person_detect does): the
    scales run along the bias; a 2-D tensor with an axis it lacks is refused in one line."""
    q = Quantization((0.5, 0.25), (0, 0), axis=3)
    bias = Tensor(0, "bias", (2,), "int32", q, np.array([4, 8], "<i4").tobytes())
    assert dequantized(bias).tolist() == [2.0, 2.0]
    odd = Tensor(1, "odd", (1, 2), "int32", q, np.array([[4, 8]], "<i4").tobytes())
    with pytest.raises(UnsupportedError, match="per-channel axis 3 of a 2-D tensor"):
        dequantized(odd)
