"""FULLY_CONNECTED against TFLM on the project's own models (int8 per-tensor, int16 x int8 with
int64/int32/no bias, per-tensor and per-channel, and float32)."""

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm, lower_only


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


# --- int16 activations, int8 weights (TFLM's 16x8 path) ----------------------------------------

S_IN, S_OUT = 4.0 / 32768, 0.002


def fc_int16(
    in_shape: tuple[int, ...],
    units: int,
    *,
    bias: str | None = "int64",
    per_channel: bool = False,
    act: int = 0,
    seed: int = 0,
    zero_points: tuple[int, int] = (0, 0),
    bias_max: int = 1 << 20,
    **options: int,
) -> bytes:
    rng = np.random.default_rng(seed)
    depth = in_shape[-1]
    b = GraphBuilder()
    x = b.input(in_shape, "int16", scale=S_IN, zero_point=zero_points[0])
    w_scale = rng.uniform(0.005, 0.04, units) if per_channel else 0.02
    w = b.const(rng.integers(-127, 128, (units, depth), dtype=np.int8), scale=w_scale)
    inputs = [x, w, -1]
    if bias is not None:
        values = rng.integers(-bias_max, bias_max, (units,)).astype(bias)
        inputs[2] = b.const(values, scale=S_IN * np.asarray(w_scale) * np.ones(units))
    batches = int(np.prod(in_shape[:-1]))
    y = b.activation((batches, units), "int16", scale=S_OUT, zero_point=zero_points[1])
    b.op("FULLY_CONNECTED", inputs, [y], fused_activation_function=act, **options)
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("bias", ["int64", "int32", None])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("act", [0, 1, 2, 3])
def test_fc_int16_bit_exact(bias: str | None, per_channel: bool, act: int) -> None:
    model = fc_int16((3, 37), 11, bias=bias, per_channel=per_channel, act=act, seed=act)
    assert_matches_tflm(model)


@pytest.mark.parametrize("in_shape", [(1, 1), (1, 64), (2, 3, 16), (5, 200)])
def test_fc_int16_shapes(in_shape: tuple[int, ...]) -> None:
    assert_matches_tflm(fc_int16(in_shape, 7, per_channel=True, seed=len(in_shape)))


def test_fc_int16_without_bias_int32_accumulator() -> None:
    """No bias but quantized_bias_type INT32: TFLM accumulates in int32 (wrapping)."""
    assert_matches_tflm(fc_int16((2, 300), 9, bias=None, quantized_bias_type=2))


@pytest.mark.parametrize("zero_points", [(3, 0), (0, -2)])
def test_fc_int16_rejects_asymmetric_activations(zero_points: tuple[int, int]) -> None:
    with pytest.raises(UnsupportedError, match="FULLY_CONNECTED.*zero point"):
        lower_only(fc_int16((1, 8), 4, zero_points=zero_points))


def test_fc_int16_rejects_a_sum_beyond_the_int64_rescale() -> None:
    """TFLM's int64 rescale assumes |sum| < 2^47; a bias near 2^50 breaks it (undefined behaviour
    in its kernel): rejected, while 2^40 still runs bit-exact."""
    assert_matches_tflm(fc_int16((1, 8), 4, bias_max=1 << 40))
    with pytest.raises(UnsupportedError, match="FULLY_CONNECTED.*2\\^47"):
        lower_only(fc_int16((1, 8), 4, bias_max=1 << 50, seed=1))


def test_fc_int16_rejects_int16_weights() -> None:
    b = GraphBuilder()
    x = b.input((1, 4), "int16", scale=S_IN, zero_point=0)
    w = b.const(np.ones((2, 4), np.int16), scale=0.01)
    y = b.activation((1, 2), "int16", scale=S_OUT, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, -1], [y])
    b.output(y)
    with pytest.raises(UnsupportedError, match="FULLY_CONNECTED.*int16"):
        lower_only(b.tflite())
