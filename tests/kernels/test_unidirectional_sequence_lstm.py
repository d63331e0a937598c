"""UNIDIRECTIONAL_SEQUENCE_LSTM against TFLM on generated models: TFLM's integer LSTM (int8
activations, int16 cell state) and float32, batch-major and time-major, with and without cell clip;
the hidden and cell states carried from one invoke to the next; the variants TFLM does not run
rejected in one line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from mcugen.codegen import quant
from mcugen.errors import UnsupportedError
from mcugen.link.host_run import random_inputs
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan.dynamic import Allocator
from support import assert_matches_tflm, assert_state_carried_as_tflm, lower_only, tflm_outputs

TANH = 4


def lstm_model(
    *,
    dtype: str = "int8",
    batch: int = 1,
    steps: int = 5,
    features: int = 7,
    state: int = 6,
    time_major: bool = False,
    cell_clip: float = 0.0,
    cell_scale: float = 2.0**-11,
    hidden_zero_point: int = -3,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    replace: dict[int, Callable[[GraphBuilder], int]] | None = None,
    expose_state: bool = False,
) -> bytes:
    """One LSTM whose output is the model's output (with `expose_state`, the hidden and cell
    states too). int8 scales are chosen so the gates' inputs spread over the int16 sigmoid's
    range. `replace` maps an input number to a tensor builder."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    shape = (steps, batch, features) if time_major else (batch, steps, features)
    out_shape = (*shape[:2], state)
    inputs: list[int] = [-1] * 24
    intermediates: list[int] = []
    if dtype == "float32":
        inputs[0] = b.input(shape, "float32")
        for i in range(1, 9):
            depth = features if i <= 4 else state
            w = rng.standard_normal((state, depth)) * 0.4
            inputs[i] = b.const(w.astype(np.float32))
        for i in range(12, 16):
            inputs[i] = b.const((rng.standard_normal(state) * 0.2).astype(np.float32))
        inputs[18] = b.variable((batch, state), "float32")
        inputs[19] = b.variable((batch, state), "float32")
        y = b.activation(out_shape, "float32")
    else:
        hq: dict[str, Any] = {"scale": 1.0 / 128, "zero_point": hidden_zero_point}
        inputs[0] = b.input(shape, "int8", scale=0.05, zero_point=-3)
        for i in range(1, 9):
            depth = features if i <= 4 else state
            scale = 0.003 if i <= 4 else 0.01
            inputs[i] = b.const(rng.integers(-127, 128, (state, depth), dtype=np.int8), scale=scale)
        for i in range(12, 16):
            bias = rng.integers(-3000, 3000, state, dtype=np.int32)
            inputs[i] = b.const(bias, scale=0.05 * 0.003)
        inputs[18] = b.variable((batch, state), "int8", **hq)
        inputs[19] = b.variable((batch, state), "int16", scale=cell_scale, zero_point=0)
        y = b.activation(out_shape, "int8", **hq)
        # as the converter writes them; TFLM's kernel does not read them
        for name in ("input", "forget", "cell", "output"):
            intermediates.append(b.activation((0,), "float32", name=f"input_to_{name}"))
        intermediates.append(b.activation((0,), "int8", name="effective_hidden_scale", **hq))
    for i, make in (replace or {}).items():
        inputs[i] = make(b)
    opts = {
        "fused_activation_function": TANH,
        "cell_clip": cell_clip,
        "proj_clip": 0.0,
        "time_major": time_major,
        "asymmetric_quantize_inputs": False,
        **(options or {}),
    }
    b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], intermediates=intermediates, **opts)
    b.output(y, *((inputs[18], inputs[19]) if expose_state else ()))
    return b.tflite()


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("cell_clip", [0.0, 10.0, 0.75])
def test_lstm_int8_bit_exact(batch: int, time_major: bool, cell_clip: float) -> None:
    model = lstm_model(batch=batch, time_major=time_major, cell_clip=cell_clip, seed=batch)
    assert_matches_tflm(model)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"cell_scale": 2.0**-12, "hidden_zero_point": 0},
        {"cell_scale": 2.0**-8, "cell_clip": 3.0},
        {"cell_scale": 2.0**-15},
        {"cell_scale": 0.0003},  # not a power of two: TFLM rounds its log2, so does mcugen
        {"steps": 1, "features": 33, "state": 17, "hidden_zero_point": 100},
    ],
    ids=["q12_cell", "q8_cell", "q15_cell", "non_pot_cell", "wide"],
)
def test_lstm_int8_scales_and_sizes(kwargs: dict[str, Any]) -> None:
    assert_matches_tflm(lstm_model(**kwargs))


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("cell_clip", [0.0, 0.5])
def test_lstm_float32_close(batch: int, time_major: bool, cell_clip: float) -> None:
    model = lstm_model(dtype="float32", batch=batch, time_major=time_major, cell_clip=cell_clip)
    assert_matches_tflm(model)


def test_float32_nan_cell_is_not_clipped_away() -> None:
    """A NaN in the cell gate's weights: TFLM's cell clip leaves a NaN cell NaN (its Clipping as
    built), so the hidden state and every later step are NaN there too; mcugen's as well. Found by
    the fuzzer (a mutated tflm_mnist_lstm_f32)."""

    def nan_weights(b: GraphBuilder) -> int:
        w = np.random.default_rng(1).standard_normal((6, 7)).astype(np.float32) * 0.4
        w[2, 3] = np.nan
        return b.const(w)

    model = lstm_model(dtype="float32", cell_clip=0.5, replace={3: nan_weights})
    result = assert_matches_tflm(model, samples=2)
    assert result.samples == 2
    assert np.isnan(tflm_outputs(model, [random_inputs(import_model(model), 0)])[0][0]).any()


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_state_is_carried_across_invokes(dtype: str) -> None:
    """The same sequence five times: the outputs change with the state left by the previous
    invoke, and they and the hidden and cell states after each invoke match TFLM's (one
    interpreter, no reset)."""
    assert_state_carried_as_tflm(lstm_model(dtype=dtype, steps=2, seed=5, expose_state=True), 3)


def test_sigmoid_table_is_tflms() -> None:
    """The table the LSTM's int16 sigmoid and tanh interpolate (quant.sigmoid_table_uint16, shared
    with LOGISTIC and TANH), read back from TFLM's own int16 TANH: with input scale 1/6144 its
    rescale doubles the input exactly, so input 128 k lands on entry k (output = entry - 32768),
    and 254 * 128 + 127 on the last interval (its slope)."""
    b = GraphBuilder()
    x = b.input((256,), "int16", scale=1.0 / 6144, zero_point=0)
    y = b.activation((256,), "int16", scale=2.0**-15, zero_point=0)
    b.op("TANH", [x], [y])
    b.output(y)
    probe = np.array([128 * k for k in range(255)] + [254 * 128 + 127], np.int16)
    out = tflm_outputs(b.tflite(), [[probe]])[0][0].astype(np.int64)
    derived = [*(out[:255] + 32768), out[254] + 32768 + (out[255] - out[254])]
    assert list(quant.sigmoid_table_uint16()) == [int(v) for v in derived]


def _int16_input(b: GraphBuilder) -> int:
    return b.input((1, 5, 7), "int16", scale=0.001, zero_point=0)


def _vector(b: GraphBuilder) -> int:
    return b.const(np.ones(6, np.int8), scale=0.01)


def _per_channel(b: GraphBuilder) -> int:
    return b.const(np.ones((6, 7), np.int8), scale=np.full(6, 0.003), zero_point=0, axis=0)


def _constant_state(b: GraphBuilder) -> int:
    return b.const(np.zeros((1, 6), np.int8), scale=1.0 / 128, zero_point=-3)


def _huge_bias(b: GraphBuilder) -> int:
    return b.const(np.full(6, 2**31 - 1000, np.int32), scale=0.05 * 0.003)


REJECTED: dict[str, tuple[Callable[[], bytes], str]] = {
    "peephole": (lambda: lstm_model(replace={9: _vector}), "peephole"),
    "projection": (lambda: lstm_model(replace={16: _vector}), "projection"),
    "layer_norm": (lambda: lstm_model(replace={20: _vector}), "layer normalization"),
    "cifg": (lambda: lstm_model(replace={1: lambda b: -1}), "CIFG"),
    "relu_cell_gate": (
        lambda: lstm_model(options={"fused_activation_function": 1}),
        "activation 1",
    ),
    "per_channel_weights": (lambda: lstm_model(replace={2: _per_channel}), "per channel"),
    "int16_activations": (lambda: lstm_model(replace={0: _int16_input}), "type int16"),
    "state_not_variable": (lambda: lstm_model(replace={18: _constant_state}), "not a variable"),
    # found by the fuzzer: a gate bias near 2^31 overflowed the int32 sum (UBSan)
    "bias_overflows_int32": (lambda: lstm_model(replace={12: _huge_bias}), "beyond int32"),
}


@pytest.mark.parametrize("case", REJECTED)
def test_unsupported_lstm_is_one_line(case: str) -> None:
    build, message = REJECTED[case]
    with pytest.raises(UnsupportedError) as info:
        lower_only(build())
    text = str(info.value)
    assert "UNIDIRECTIONAL_SEQUENCE_LSTM" in text and message in text and "\n" not in text


@pytest.mark.parametrize("allocator", ["compacting", "planned"])
def test_state_outside_the_arena_survives_moving_allocators(allocator: str) -> None:
    """Buffers that move between operators never touch the state: it is not in the arena."""
    model = lstm_model(steps=3, expose_state=True)

    def moving(graph: Graph) -> Generated:
        return generate(graph, options=PlanOptions(allocator=Allocator(allocator)))

    assert_matches_tflm(model, samples=3, generate_fn=moving)
