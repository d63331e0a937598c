"""SVDF against TFLM on generated models: int8 with int8 or int16 state, float32; the state carried
from one invoke to the next (several samples through one interpreter and one mcugen process)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm, assert_state_carried_as_tflm, lower_only


def svdf_model(
    *,
    batch: int = 1,
    inputs: int = 20,
    units: int = 8,
    rank: int = 1,
    memory: int = 6,
    dtype: str = "int8",
    state_dtype: str = "int8",
    act: int = 0,
    bias: bool = True,
    state_zero_point: int = -9,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    expose_state: bool = False,
    extreme: bool = False,
) -> bytes:
    """One SVDF (with `expose_state`, its state is an output too); int8 scales chosen from the
    weights' spread so outputs rarely saturate."""
    rng = np.random.default_rng(seed)
    filters = units * rank
    b = GraphBuilder()
    if dtype == "float32":
        x = b.input((batch, inputs), "float32")
        wf = b.const((rng.standard_normal((filters, inputs)) * 0.3).astype(np.float32))
        wt = b.const((rng.standard_normal((filters, memory)) * 0.3).astype(np.float32))
        bs = b.const(rng.standard_normal(units).astype(np.float32)) if bias else -1
        state = b.variable((batch, memory * filters), "float32")
        y = b.activation((batch, units), "float32")
    else:
        wide = state_dtype == "int16"
        qmax = 32767 if wide else 127
        sx, sf, st = 0.05, 0.01, 0.02 if not wide else 0.0005
        feature_std = math.sqrt(inputs) * 74 * sx * 74 * sf
        ss = 3 * feature_std / qmax * (1e-3 if extreme else 1.0)  # extreme: the state saturates
        out_std = math.sqrt(memory * rank) * feature_std * (qmax / 2 * st)
        x = b.input((batch, inputs), "int8", scale=sx, zero_point=-3)
        features = rng.integers(-127, 128, (filters, inputs), dtype=np.int8)
        wf = b.const(np.full_like(features, 127) if extreme else features, scale=sf)
        time_w = rng.integers(-qmax, qmax + 1, (filters, memory)).astype(state_dtype)
        if extreme:
            time_w[:] = qmax
        wt = b.const(time_w, scale=st)
        bias_scale = float(np.float32(ss) * np.float32(st))
        bias_q = rng.integers(-2000, 2000, units, dtype=np.int32)
        bs = b.const(bias_q, scale=bias_scale) if bias else -1
        zp = 0 if wide else state_zero_point
        state = b.variable((batch, memory * filters), state_dtype, scale=ss, zero_point=zp)
        # extreme: an output step per 2^31 / 100 of the sum, so a wrapped sum shows
        y_scale = ss * st * 2**31 / 100 if extreme else 3 * out_std / 127
        y = b.activation((batch, units), "int8", scale=y_scale, zero_point=5)
    opts: dict[str, Any] = {"rank": rank, "fused_activation_function": act, **(options or {})}
    b.op("SVDF", [x, wf, wt, bs, state], [y], **opts)
    b.output(y, *((state,) if expose_state else ()))
    return b.tflite()


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("memory", [1, 5])
def test_svdf_int8_state8_bit_exact(batch: int, rank: int, memory: int) -> None:
    assert_matches_tflm(svdf_model(batch=batch, rank=rank, memory=memory, seed=batch + rank))


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("rank", [1, 3])
def test_svdf_int8_state16_bit_exact(batch: int, rank: int) -> None:
    assert_matches_tflm(svdf_model(batch=batch, rank=rank, state_dtype="int16", memory=7))


def test_svdf_int16_sums_wrap_as_tflms() -> None:
    """Saturated int16 state against full-scale time weights: each filter's sum passes 2^31 within
    a few invokes. TFLM's int32 sums wrap there (undefined behaviour, a wrap in practice); mcugen's
    wrap by definition (mcu_wrap_add_i32, checked under UBSan by the fuzzer) and match them."""
    model = svdf_model(state_dtype="int16", memory=8, rank=3, units=2, extreme=True)
    assert_matches_tflm(model, samples=10)


@pytest.mark.parametrize("act", [0, 1, 3])
@pytest.mark.parametrize("zero_point", [-128, 0, 77])
def test_svdf_int8_ignores_fused_activation_as_tflm(act: int, zero_point: int) -> None:
    """TFLM's integer SVDF applies no fused activation; the state starts at its zero point."""
    assert_matches_tflm(svdf_model(act=act, state_zero_point=zero_point, seed=act))


@pytest.mark.parametrize("act", [0, 1, 2, 3, 4, 5])
def test_svdf_float32_close(act: int) -> None:
    assert_matches_tflm(svdf_model(dtype="float32", act=act, batch=2, rank=2, seed=act))


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_state_is_carried_across_invokes(dtype: str) -> None:
    """The same input five times: the outputs change as the state fills, and they and the state
    after each invoke match TFLM's (one interpreter, no reset)."""
    assert_state_carried_as_tflm(svdf_model(dtype=dtype, memory=4, units=16, expose_state=True), 7)


def test_initial_buffer_of_the_state_is_ignored_as_tflm() -> None:
    """TFLM gives a variable its own memory and resets it; a buffer in the file is not used."""
    b = GraphBuilder()
    x = b.input((1, 4), "float32")
    wf = b.const(np.full((2, 4), 0.5, np.float32))
    wt = b.const(np.full((2, 3), 0.25, np.float32))
    bias = b.const(np.array([0.5, -0.5], np.float32))
    state = b.variable((1, 6), "float32", initial=np.full((1, 6), 9.0, np.float32))
    y = b.activation((1, 2), "float32")
    b.op("SVDF", [x, wf, wt, bias, state], [y], rank=1, fused_activation_function=0)
    b.output(y)
    assert_matches_tflm(b.tflite(), samples=3)


def _int16_time_int8_state() -> bytes:
    b = GraphBuilder()
    x = b.input((1, 4), "int8", scale=0.1, zero_point=0)
    wf = b.const(np.ones((2, 4), np.int8), scale=0.1)
    wt = b.const(np.ones((2, 3), np.int16), scale=0.1)
    bs = b.const(np.zeros(2, np.int32), scale=0.01)
    state = b.variable((1, 6), "int8", scale=0.1, zero_point=0)
    y = b.activation((1, 2), "int8", scale=0.1, zero_point=0)
    b.op("SVDF", [x, wf, wt, bs, state], [y], rank=1, fused_activation_function=0)
    b.output(y)
    return b.tflite()


REJECTED: dict[str, tuple[Callable[[], bytes], str]] = {
    "int8_without_bias": (lambda: svdf_model(bias=False), "without a bias"),
    "float32_without_bias": (lambda: svdf_model(dtype="float32", bias=False), "without a bias"),
    "state_type_differs_from_time_weights": (_int16_time_int8_state, "type int8"),
    "rank_zero": (lambda: svdf_model(options={"rank": 0}), "rank 0"),
    "rank_not_dividing_filters": (lambda: svdf_model(units=5, options={"rank": 2}), "rank 2"),
    "sign_bit_on_float": (lambda: svdf_model(dtype="float32", act=6), "activation 6"),
}


@pytest.mark.parametrize("case", REJECTED)
def test_unsupported_svdf_is_one_line(case: str) -> None:
    build, message = REJECTED[case]
    with pytest.raises(UnsupportedError) as info:
        lower_only(build())
    text = str(info.value)
    assert "SVDF" in text and message in text and "\n" not in text
