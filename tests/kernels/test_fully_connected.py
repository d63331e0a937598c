"""FULLY_CONNECTED against TFLM on the project's own models (int8 per-tensor and float32)."""

import numpy as np
import pytest

from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm


def fc_int8(batch: int, depth: int, units: int, act: int, with_bias: bool, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((batch, depth), "int8", scale=0.05, zero_point=-7)
    w = b.const(rng.integers(-127, 128, (units, depth), dtype=np.int8), scale=0.02)
    inputs = [x, w]
    if with_bias:
        inputs.append(b.const(rng.integers(-500, 500, (units,), dtype=np.int32), scale=0.05 * 0.02))
    else:
        inputs.append(-1)
    y = b.activation((batch, units), "int8", scale=0.3, zero_point=5)
    b.op("FULLY_CONNECTED", inputs, [y], fused_activation_function=act)
    b.output(y)
    return b.tflite()


def fc_f32(batch: int, depth: int, units: int, act: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((batch, depth), "float32")
    w = b.const(rng.standard_normal((units, depth)).astype(np.float32))
    bias = b.const(rng.standard_normal(units).astype(np.float32))
    y = b.activation((batch, units), "float32")
    b.op("FULLY_CONNECTED", [x, w, bias], [y], fused_activation_function=act)
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("act", [0, 1, 3])
@pytest.mark.parametrize("with_bias", [True, False])
def test_fc_int8_bit_exact(act: int, with_bias: bool) -> None:
    assert_matches_tflm(fc_int8(3, 37, 11, act, with_bias, seed=act))


@pytest.mark.parametrize("act", [0, 1, 3])
def test_fc_float32_close(act: int) -> None:
    assert_matches_tflm(fc_f32(2, 29, 13, act, seed=act))
