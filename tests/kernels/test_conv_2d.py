"""CONV_2D against TFLM: int8 (per-channel and per-tensor weights) and int16 x int8 (int64, int32
or no bias) bit-exact, float32 close."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import Conv, assert_matches_tflm, conv_int8, lower_only

SAME, VALID = 0, 1
NONE, RELU, RELU6 = 0, 1, 3


def conv_f32(c: Conv, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((c.batch, *c.in_hwc), "float32")
    w = b.const(rng.standard_normal(c.filter_shape()).astype(np.float32))
    inputs = [x, w]
    inputs.append(b.const(rng.standard_normal(c.out_c).astype(np.float32)) if c.bias else -1)
    y = b.activation((c.batch, *c.out_hw(), c.out_c), "float32")
    b.op("CONV_2D", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


CASES = {
    "3x3_same_s1": Conv(),
    "3x3_same_s2_relu": Conv(stride=(2, 2), act=RELU),
    "even_input_same_s2": Conv(in_hwc=(8, 10, 3), stride=(2, 2)),
    "3x3_valid_s2_relu6": Conv(padding=VALID, stride=(2, 2), act=RELU6),
    "1x1_pointwise_relu6": Conv(in_hwc=(7, 5, 16), out_c=24, kernel=(1, 1), act=RELU6),
    "10x4_kws_stem": Conv(in_hwc=(49, 10, 1), out_c=8, kernel=(10, 4), stride=(2, 2), act=RELU),
    "dilation2_same": Conv(in_hwc=(10, 9, 4), dilation=(2, 2)),
    "dilation2_valid_nonsquare": Conv(kernel=(2, 3), dilation=(2, 1), padding=VALID),
    "stride_1x2_batch2": Conv(stride=(1, 2), batch=2, act=RELU),
    "grouped_2": Conv(in_hwc=(6, 7, 8), out_c=6, groups=2),
    "no_bias": Conv(bias=False, act=RELU),
    "per_tensor": Conv(per_channel=False),
    "rescale_above_one": Conv(
        kernel=(1, 1), in_hwc=(5, 6, 1), weight_max=1, out_scale=3e-4, bias=False
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_int8_bit_exact(name: str) -> None:
    assert_matches_tflm(conv_int8(CASES[name], seed=len(name)))


@pytest.mark.parametrize(
    "name",
    [
        "3x3_same_s2_relu",
        "3x3_valid_s2_relu6",
        "1x1_pointwise_relu6",
        "dilation2_same",
        "grouped_2",
        "no_bias",
    ],
)
def test_conv_float32_close(name: str) -> None:
    assert_matches_tflm(conv_f32(CASES[name], seed=len(name)))


def test_conv_rejects_groups_not_dividing_outputs() -> None:
    with pytest.raises(UnsupportedError, match="CONV_2D"):
        lower_only(conv_int8(Conv(in_hwc=(6, 7, 8), out_c=5, groups=2)))


def test_conv_rejects_tanh_activation() -> None:
    with pytest.raises(UnsupportedError, match="CONV_2D"):
        lower_only(conv_int8(Conv(act=4)))


def test_conv_rejects_hybrid_weights() -> None:
    b = GraphBuilder()
    x = b.input((1, 4, 4, 2), "float32")
    w = b.const(np.ones((3, 1, 1, 2), np.int8), scale=0.1)
    y = b.activation((1, 4, 4, 3), "float32")
    b.op("CONV_2D", [x, w, -1], [y], padding=SAME, stride_h=1, stride_w=1)
    b.output(y)
    with pytest.raises(UnsupportedError, match="CONV_2D.*hybrid"):
        lower_only(b.tflite())


# --- int16 activations, int8 weights (TFLM's 16x8 path) ----------------------------------------


def conv_int16(
    c: Conv,
    seed: int = 0,
    bias: str | None = "int64",
    zero_points: tuple[int, int] = (0, 0),
    bias_max: int = 1 << 18,
) -> bytes:
    """`bias` is the bias type, or None for none; "acc32" is no bias with quantized_bias_type
    INT32 (TFLM then accumulates in int32)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    s_in = 4.0 / 32768
    x = b.input((c.batch, *c.in_hwc), "int16", scale=s_in, zero_point=zero_points[0])
    w_scales = rng.uniform(0.002, 0.02, c.out_c) if c.per_channel else 0.011
    weights = rng.integers(-c.weight_max, c.weight_max + 1, c.filter_shape(), dtype=np.int8)
    inputs = [x, b.const(weights, scale=w_scales, zero_point=0, axis=0), -1]
    if bias not in (None, "acc32"):
        values = rng.integers(-bias_max, bias_max, c.out_c).astype(bias)
        inputs[2] = b.const(values, scale=s_in * np.atleast_1d(w_scales))
    shape = (c.batch, *c.out_hw(), c.out_c)
    y = b.activation(shape, "int16", scale=c.out_scale * 0.005, zero_point=zero_points[1])
    options = c.options() | ({"quantized_bias_type": 2} if bias == "acc32" else {})
    b.op("CONV_2D", inputs, [y], **options)
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_int16_bit_exact(name: str) -> None:
    assert_matches_tflm(conv_int16(CASES[name], seed=len(name)))


@pytest.mark.parametrize("bias", ["int32", None, "acc32"])
@pytest.mark.parametrize("name", ["3x3_same_s2_relu", "grouped_2", "per_tensor"])
def test_conv_int16_bias_types(name: str, bias: str | None) -> None:
    assert_matches_tflm(conv_int16(CASES[name], seed=3, bias=bias))


@pytest.mark.parametrize("zero_points", [(5, 0), (0, -1)])
def test_conv_int16_rejects_asymmetric_activations(zero_points: tuple[int, int]) -> None:
    with pytest.raises(UnsupportedError, match="CONV_2D.*zero point"):
        lower_only(conv_int16(Conv(), zero_points=zero_points))


def test_conv_int16_rejects_a_sum_beyond_the_int64_rescale() -> None:
    """|sum| must stay under the 2^47 TFLM's int64 rescale assumes (checked for every int64 16x8
    kernel: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV)."""
    with pytest.raises(UnsupportedError, match="CONV_2D.*2\\^47"):
        lower_only(conv_int16(Conv(), bias_max=1 << 50))


def test_conv_int16_rejects_int8_bias() -> None:
    with pytest.raises(UnsupportedError, match="CONV_2D.*int8"):
        lower_only(conv_int16(Conv(), bias="int8"))
