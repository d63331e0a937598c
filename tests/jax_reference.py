"""An independent reference for training: the float part of a training graph's forward model
evaluated in JAX, its loss, and the loss's gradients by every trained parameter (jax.grad).

`float_part_grads(tg, boundary, label)` takes the values entering the float part (the outputs of
its DEQUANTIZE operators, or the model inputs of a float model) and returns {parameter variable
tensor in the training graph: gradient}. `boundary_values` computes those entering values with
TFLM (the frozen int8 prefix and its DEQUANTIZE, written as a model of their own). Each forward
opcode the float part may hold has one JAX function in `JAX_OPS`. `assert_host_matches_jax` is
the training tests' comparison: one sample on the host build against jax.grad.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.link.host_run import run_host
from mcugen.model.ir import Graph, Operator
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from mcugen.reference import tflm_outputs
from mcugen.train.graph import TrainingGraph, compact
from mcugen.train.steps import variables

jax.config.update("jax_enable_x64", False)

Env = dict[int, Any]
JaxOp = Callable[[Graph, Operator, Env], list[Any]]
JAX_OPS: dict[str, JaxOp] = {}


def jax_op(*opcodes: str) -> Callable[[JaxOp], JaxOp]:
    def wrap(fn: JaxOp) -> JaxOp:
        for code in opcodes:
            JAX_OPS[code] = fn
        return fn

    return wrap


def activation(op: Operator, y: Any) -> Any:
    act = int(op.options.get("fused_activation_function", 0))
    if act == 1:
        return jax.nn.relu(y)
    if act == 2:
        return jnp.clip(y, -1.0, 1.0)
    if act == 3:
        return jnp.clip(y, 0.0, 6.0)
    assert act == 0, act
    return y


def value(graph: Graph, env: Env, t: int) -> Any:
    if t in env:
        return env[t]
    tensor = graph.tensors[t]
    assert tensor.data is not None, f"tensor {t} has no value"
    return jnp.asarray(np.frombuffer(tensor.data, dtype=tensor.dtype).reshape(tensor.shape))


@jax_op("FULLY_CONNECTED")
def _fully_connected(graph: Graph, op: Operator, env: Env) -> list[Any]:
    x, w = value(graph, env, op.inputs[0]), value(graph, env, op.inputs[1])
    y = x.reshape(-1, w.shape[1]) @ w.T
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        y = y + value(graph, env, op.inputs[2])
    return [activation(op, y).reshape(graph.tensors[op.outputs[0]].shape)]


@jax_op("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def _reshape(graph: Graph, op: Operator, env: Env) -> list[Any]:
    return [value(graph, env, op.inputs[0]).reshape(graph.tensors[op.outputs[0]].shape)]


@jax_op("ADD")
def _add(graph: Graph, op: Operator, env: Env) -> list[Any]:
    a, b = (value(graph, env, t) for t in op.inputs)
    return [activation(op, a + b)]


# --- convolutions (CONV_2D, DEPTHWISE_CONV_2D) --------------------------------------------------


def _conv_padding(
    op: Operator, in_hw: Sequence[int], k_hw: Sequence[int], out_hw: Sequence[int]
) -> list[tuple[int, int]]:
    """TFLite's padding as (before, after) per spatial axis: SAME pads max((out - 1) * stride +
    (k - 1) * dilation + 1 - in, 0) in total, half (rounded down) before; VALID pads nothing."""
    pads = []
    for i, axis in enumerate("hw"):
        stride = int(op.options.get(f"stride_{axis}", 1))
        dilation = int(op.options.get(f"dilation_{axis}_factor", 1))
        total = max((out_hw[i] - 1) * stride + (k_hw[i] - 1) * dilation + 1 - in_hw[i], 0)
        if int(op.options.get("padding", 0)) == 1:  # VALID
            total = 0
        pads.append((total // 2, total - total // 2))
    return pads


def _convolve(graph: Graph, op: Operator, env: Env, w_ohwi: Any, groups: int) -> list[Any]:
    """act(conv(x, W) + b) with W laid out [O, KH, KW, I] and `groups` feature groups."""
    x = value(graph, env, op.inputs[0])
    out_shape = graph.tensors[op.outputs[0]].shape
    y = jax.lax.conv_general_dilated(
        x,
        w_ohwi,
        window_strides=(int(op.options.get("stride_h", 1)), int(op.options.get("stride_w", 1))),
        padding=_conv_padding(op, x.shape[1:3], w_ohwi.shape[1:3], out_shape[1:3]),
        rhs_dilation=(
            int(op.options.get("dilation_h_factor", 1)),
            int(op.options.get("dilation_w_factor", 1)),
        ),
        dimension_numbers=("NHWC", "OHWI", "NHWC"),
        feature_group_count=groups,
        precision=jax.lax.Precision.HIGHEST,
    )
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        y = y + value(graph, env, op.inputs[2])
    assert y.shape == out_shape, (y.shape, out_shape)
    return [activation(op, y)]


@jax_op("CONV_2D")
def _conv_2d(graph: Graph, op: Operator, env: Env) -> list[Any]:
    w = value(graph, env, op.inputs[1])  # [O, KH, KW, C / groups]
    groups = graph.tensors[op.inputs[0]].shape[3] // w.shape[3]
    return _convolve(graph, op, env, w, groups)


@jax_op("DEPTHWISE_CONV_2D")
def _depthwise_conv_2d(graph: Graph, op: Operator, env: Env) -> list[Any]:
    w = value(graph, env, op.inputs[1])  # [1, KH, KW, C * M]: output channel c * M + m reads c
    channels = graph.tensors[op.inputs[0]].shape[3]
    return _convolve(graph, op, env, jnp.transpose(w, (3, 1, 2, 0)), channels)


# --- activations ---------------------------------------------------------------------------------


@jax_op("RELU")
def _relu(graph: Graph, op: Operator, env: Env) -> list[Any]:
    return [jax.nn.relu(value(graph, env, op.inputs[0]))]


@jax_op("RELU6")
def _relu6(graph: Graph, op: Operator, env: Env) -> list[Any]:
    return [jnp.clip(value(graph, env, op.inputs[0]), 0.0, 6.0)]


@jax_op("RELU_N1_TO_1")
def _relu_n1(graph: Graph, op: Operator, env: Env) -> list[Any]:
    return [jnp.clip(value(graph, env, op.inputs[0]), -1.0, 1.0)]


# --- pooling, MEAN, PAD, CONCATENATION, MUL ------------------------------------------------------


def pool_padding(graph: Graph, op: Operator) -> list[tuple[int, int]]:
    """TFLite's padding of a pool's image axes: VALID none; SAME total =
    max((out - 1) * stride + filter - in, 0), before = total // 2, the rest after."""
    x, y = graph.tensors[op.inputs[0]].shape, graph.tensors[op.outputs[0]].shape
    o = op.options
    windows = ((o["stride_h"], o["filter_height"]), (o["stride_w"], o["filter_width"]))
    pads = []
    for axis, (stride, filt) in zip((1, 2), windows, strict=True):
        total = max((y[axis] - 1) * int(stride) + int(filt) - x[axis], 0)
        if int(o.get("padding", 0)) == 1:  # VALID
            total = 0
        pads.append((total // 2, total - total // 2))
    return [(0, 0), *pads, (0, 0)]


def pool_window(graph: Graph, op: Operator, x: Any, init: float, reducer: Any) -> Any:
    o = op.options
    dims = (1, int(o["filter_height"]), int(o["filter_width"]), 1)
    strides = (1, int(o["stride_h"]), int(o["stride_w"]), 1)
    return jax.lax.reduce_window(x, init, reducer, dims, strides, pool_padding(graph, op))


@jax_op("AVERAGE_POOL_2D")
def _average_pool(graph: Graph, op: Operator, env: Env) -> list[Any]:
    """The sum of each window's in-image taps divided by their count (padding never counts)."""
    x = value(graph, env, op.inputs[0])
    total = pool_window(graph, op, x, 0.0, jax.lax.add)
    count = pool_window(graph, op, jnp.ones_like(x), 0.0, jax.lax.add)
    return [activation(op, total / count)]


@jax_op("MAX_POOL_2D")
def _max_pool(graph: Graph, op: Operator, env: Env) -> list[Any]:
    """Padding is -inf, so it never wins. Which of tied taps gets XLA's gradient is XLA's choice
    (the first, on CPU, in the cases tried); the backward kernel's is the first. Tests avoid
    ties."""
    x = value(graph, env, op.inputs[0])
    return [activation(op, pool_window(graph, op, x, -jnp.inf, jax.lax.max))]


@jax_op("MEAN")
def _mean(graph: Graph, op: Operator, env: Env) -> list[Any]:
    x = value(graph, env, op.inputs[0])
    axes = tuple(
        sorted({int(a) % x.ndim for a in np.asarray(value(graph, env, op.inputs[1])).ravel()})
    )
    return [jnp.mean(x, axis=axes).reshape(graph.tensors[op.outputs[0]].shape)]


@jax_op("PAD", "PADV2")
def _pad(graph: Graph, op: Operator, env: Env) -> list[Any]:
    x = value(graph, env, op.inputs[0])
    pairs = [
        (int(lo), int(hi)) for lo, hi in np.asarray(value(graph, env, op.inputs[1])).reshape(-1, 2)
    ]
    fill = value(graph, env, op.inputs[2]).reshape(()) if len(op.inputs) > 2 else 0.0
    return [jnp.pad(x, pairs, constant_values=fill)]


@jax_op("CONCATENATION")
def _concatenation(graph: Graph, op: Operator, env: Env) -> list[Any]:
    parts = [value(graph, env, t) for t in op.inputs]
    return [activation(op, jnp.concatenate(parts, axis=int(op.options.get("axis", 0))))]


@jax_op("MUL")
def _mul(graph: Graph, op: Operator, env: Env) -> list[Any]:
    a, b = (value(graph, env, t) for t in op.inputs)
    return [activation(op, a * b)]


# --- the float part of a training graph ----------------------------------------------------------


def float_part_ops(tg: TrainingGraph) -> list[Operator]:
    """The float part's forward operators, without the final SOFTMAX of a cross-entropy graph
    (the loss reads its input)."""
    ops = [tg.forward.operators[i] for i in tg.forward_float_ops]
    if tg.loss == "cross_entropy":
        assert ops[-1].opcode == "SOFTMAX"
        ops = ops[:-1]
    return ops


def entering(tg: TrainingGraph) -> list[int]:
    """Forward-graph tensors the float part reads that it does not compute and that are not
    constants: DEQUANTIZE outputs and float model inputs, in first-use order."""
    ops = float_part_ops(tg)
    made = {t for op in ops for t in op.outputs}
    seen: list[int] = []
    for op in ops:
        for t in op.inputs:
            tensor = tg.forward.tensors[t] if t >= 0 else None
            if tensor is None or t in made or t in seen:
                continue
            if tensor.data is None or tensor.is_variable and not tensor.keeps_initial:
                seen.append(t)
    return seen


def boundary_values(tg: TrainingGraph, inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """The values entering the float part, computed by TFLM from the model inputs."""
    from mcugen.model.tflite_write import write_model

    graph = tg.forward
    wanted = entering(tg)
    direct = {t: np.asarray(a) for t, a in zip(graph.inputs, inputs, strict=True) if t in wanted}
    rest = tuple(t for t in wanted if t not in direct)
    if not rest:
        return direct
    floats = set(tg.forward_float_ops)
    prefix_ops = [op for op in graph.operators if op.index not in floats]
    prefix, _ = compact("prefix", graph.tensors, prefix_ops, graph.inputs, rest)
    sample = [np.asarray(a) for a in inputs]
    outs = tflm_outputs(write_model(prefix), prefix, [sample])[0]
    for t, arr in zip(rest, outs, strict=True):
        direct[t] = np.asarray(arr, dtype=np.float32).reshape(graph.tensors[t].shape)
    return direct


def loss_value(tg: TrainingGraph, out: Any, label: np.ndarray) -> Any:
    if tg.loss == "mse":
        return jnp.mean((out.reshape(-1) - jnp.asarray(label).reshape(-1)) ** 2)
    beta = float(tg.forward.operators[-1].options.get("beta", 1.0))
    logits = beta * out.reshape(-1, out.shape[-1])
    logp = jax.nn.log_softmax(logits, axis=-1)
    rows = jnp.arange(logits.shape[0])
    return -jnp.mean(logp[rows, jnp.asarray(label).reshape(-1)])


def float_part_grads(
    tg: TrainingGraph,
    boundary: dict[int, np.ndarray],
    label: np.ndarray,
    weights: dict[int, np.ndarray] | None = None,
) -> tuple[float, dict[int, np.ndarray]]:
    """(loss, {training-graph parameter variable: d loss / d parameter}) in JAX, at the model's
    parameter values or at `weights` (training-graph parameter variable -> value)."""
    graph = tg.forward
    ops = float_part_ops(tg)
    names = [p.forward_tensor for p in tg.params]

    def loss_of(values: list[Any]) -> Any:
        env: Env = {t: jnp.asarray(v) for t, v in boundary.items()}
        env.update(dict(zip(names, values, strict=True)))
        for op in ops:
            for t, v in zip(op.outputs, JAX_OPS[op.opcode](graph, op, env), strict=True):
                env[t] = v
        logits = ops[-1].outputs[0]
        return loss_value(tg, env[logits], label)

    start = [value(graph, {}, p.forward_tensor) for p in tg.params]
    if weights is not None:
        start = [
            jnp.asarray(weights[p.tensor]).reshape(w.shape)
            for p, w in zip(tg.params, start, strict=True)
        ]
    loss, grads = jax.value_and_grad(loss_of)(start)
    return float(loss), {p.tensor: np.asarray(g) for p, g in zip(tg.params, grads, strict=True)}


# --- the host build against JAX ------------------------------------------------------------------

RTOL = 1e-5
HOST = resolve_target(load_board("host"), emulate=False)


def host_state(
    tg: TrainingGraph, samples: list[list[np.ndarray]]
) -> tuple[float, dict[int, np.ndarray]]:
    """(the last sample's loss, {training-graph variable: its value}) after the host build has
    run `samples` (each the model's inputs, the label and `apply`)."""
    gen = generate(tg.graph, options=PlanOptions(rewrites=False))
    with tempfile.TemporaryDirectory(prefix="mcugen-train-") as tmp:
        exe = build(gen, HOST, Path(tmp) / "p").executable
        run = run_host(exe, tg.graph, samples, state=True)
    assert run.state is not None
    return float(run.outputs[-1][0][0]), variables(gen.view_model, gen.graph, run.state)


def host_gradients(
    tg: TrainingGraph, sample: list[np.ndarray]
) -> tuple[float, dict[int, np.ndarray]]:
    """(loss, {parameter variable: its gradient}) from one host-run sample with apply = 0 (a
    graph that accumulates, so the accumulators hold exactly that sample's gradients)."""
    assert tg.options.accumulate >= 2, "the gradients are read from the accumulators"
    loss, state = host_state(tg, [sample])
    return loss, {p.tensor: state[p.accumulator] for p in tg.params}


def assert_host_matches_jax(
    tg: TrainingGraph,
    inputs: list[np.ndarray],
    label: np.ndarray,
    *,
    what: str = "",
    loss_abs: float = 1e-6,
) -> None:
    """The host build's loss and every parameter's gradient for one sample equal jax.grad's
    within RTOL, relative to the largest gradient of the tensor."""
    label_type = np.int32 if tg.loss == "cross_entropy" else np.float32
    sample = [*inputs, np.asarray(label).astype(label_type), np.array([0], np.int32)]
    loss, ours = host_gradients(tg, sample)
    ref_loss, theirs = float_part_grads(tg, boundary_values(tg, inputs), label)
    assert loss == pytest.approx(ref_loss, rel=RTOL, abs=loss_abs)
    for p in tg.params:
        a, b = ours[p.tensor], theirs[p.tensor].reshape(ours[p.tensor].shape)
        scale = max(float(np.max(np.abs(b))), 1e-12)
        worst = float(np.max(np.abs(a - b))) / scale
        assert worst <= RTOL, f"{what}{p.role} of operator {p.op}: relative error {worst:.2e}"
