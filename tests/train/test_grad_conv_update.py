"""The convolution backward operators (conv_2d_grad.c, depthwise_conv_2d_grad.c) beyond their
gradients (test_grad_conv.py): their lowerings take the forward window and refuse options their
shapes deny, and the weight update, in the kernels of CONV_2D and FULLY_CONNECTED and in
McugenSgd, is checked against PyTorch's SGD formula on JAX's gradients (the last section)."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import numpy as np
import pytest
from jax_reference import float_part_grads, host_state

from mcugen.codegen.lower import fields, lower
from mcugen.codegen.quant import FLOAT_MAX
from mcugen.errors import McugenError
from mcugen.model.ir import Graph, Operator
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from support import ConvLayer, float_conv_model

SAME, VALID = 0, 1
KINDS = ("CONV_2D", "DEPTHWISE_CONV_2D")


# --- lowering of the backward operators -----------------------------------------------------


def backward_operator(kind: str, **changes: object) -> tuple[Graph, Operator]:
    """A chain of two `kind` convolutions trained from the first: the training graph and its
    second backward operator (the first convolution's), with options `changes` applied."""
    layer = ConvLayer(kind, 2, (3, 2), (2, 1), (1, 2), SAME, 1, True)
    model, _ = float_conv_model(0, (9, 7, 4), [layer, layer], 3)
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
    ConvLayer("CONV_2D", 4, (3, 3), (2, 1), (1, 1), SAME, 1, True),
    ConvLayer("DEPTHWISE_CONV_2D", 2, (2, 3), (1, 1), (1, 2), VALID, 3, True),
]


@pytest.mark.parametrize(("momentum", "weight_decay"), [(0.9, 0.01), (0.0, 0.0)])
def test_sgd_updates_match_the_formula_on_jax_gradients(
    momentum: float, weight_decay: float
) -> None:
    model, _ = float_conv_model(5, (7, 6, 3), LAYERS, 4)
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
