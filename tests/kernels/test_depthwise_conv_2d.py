"""DEPTHWISE_CONV_2D against TFLM: int8 (per-channel and per-tensor) and int16 x int8 bit-exact,
float32 close."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.link.host_run import random_inputs
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from support import Dw, assert_matches_tflm, dw_int8, lower_only, mcugen_outputs, tflm_outputs

SAME, VALID = 0, 1
NONE, RELU, RELU6 = 0, 1, 3


def dw_f32(c: Dw, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((c.batch, *c.in_hwc), "float32")
    inputs = [x, b.const(rng.standard_normal((1, *c.kernel, c.out_c)).astype(np.float32))]
    if c.bias == "const":
        inputs.append(b.const(rng.standard_normal(c.out_c).astype(np.float32)))
    elif c.bias == "omitted":
        inputs.append(-1)
    y = b.activation((c.batch, *c.out_hw(), c.out_c), "float32")
    b.op("DEPTHWISE_CONV_2D", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


CASES = {
    "3x3_same_s1_relu": Dw(act=RELU),
    "3x3_same_s2_relu6": Dw(stride=(2, 2), act=RELU6),
    "even_input_same_s2": Dw(in_hwc=(10, 8, 5), stride=(2, 2)),
    "3x3_valid_s2": Dw(padding=VALID, stride=(2, 2)),
    "mult8_from_1_channel_s2": Dw(in_hwc=(13, 12, 1), mult=8, stride=(2, 2), act=RELU6),
    "mult2": Dw(in_hwc=(7, 6, 3), mult=2, act=RELU),
    "dilation2_same": Dw(in_hwc=(10, 9, 4), dilation=(2, 2)),
    "dilation_1x2_valid": Dw(dilation=(1, 2), padding=VALID),
    "nonsquare_1x5": Dw(kernel=(1, 5), act=RELU6),
    "nonsquare_5x2_s1x2": Dw(kernel=(5, 2), stride=(1, 2)),
    "batch2": Dw(batch=2, act=RELU),
    "no_bias": Dw(bias="absent"),
    "per_tensor": Dw(per_channel=False, act=RELU),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_depthwise_int8_bit_exact(name: str) -> None:
    assert_matches_tflm(dw_int8(CASES[name], seed=len(name)))


@pytest.mark.parametrize(
    "name",
    [
        "3x3_same_s2_relu6",
        "3x3_valid_s2",
        "mult8_from_1_channel_s2",
        "dilation2_same",
        "nonsquare_5x2_s1x2",
        "no_bias",
    ],
)
def test_depthwise_float32_close(name: str) -> None:
    assert_matches_tflm(dw_f32(CASES[name], seed=len(name)))


@pytest.mark.parametrize("build", [dw_int8, dw_f32])
def test_depthwise_omitted_bias_matches_two_input_form(build: Callable[[Dw], bytes]) -> None:
    """A -1 bias input crashes TFLM's depthwise Prepare (it frees the missing bias tensor), so
    mcugen's output for it is compared with TFLM's for the same model written with two inputs."""
    omitted, absent = build(Dw(bias="omitted", act=RELU)), build(Dw(bias="absent", act=RELU))
    samples = [random_inputs(import_model(absent, source="test model"), k) for k in range(3)]
    ours, ref = mcugen_outputs(omitted, samples), tflm_outputs(absent, samples)
    for o, r in zip(ours, ref, strict=True):
        np.testing.assert_allclose(o[0], r[0].reshape(o[0].shape), rtol=1e-5, atol=1e-5)


def test_depthwise_rejects_wrong_depth_multiplier_option() -> None:
    with pytest.raises(UnsupportedError, match="DEPTHWISE_CONV_2D"):
        lower_only(dw_int8(Dw(in_hwc=(5, 5, 2), mult=2, option_mult=1)))


def test_depthwise_rejects_int16_weights() -> None:
    b = GraphBuilder()
    x = b.input((1, 4, 4, 2), "int16", scale=0.01)
    w = b.const(np.ones((1, 3, 3, 2), np.int16), scale=0.1)
    y = b.activation((1, 4, 4, 2), "int16", scale=0.01)
    b.op("DEPTHWISE_CONV_2D", [x, w], [y], depth_multiplier=1)
    b.output(y)
    with pytest.raises(UnsupportedError, match="DEPTHWISE_CONV_2D"):
        lower_only(b.tflite())


# --- int16 activations, int8 weights (TFLM's 16x8 path) ----------------------------------------


def dw_int16(
    c: Dw, seed: int = 0, bias_type: str = "int64", zero_points: tuple[int, int] = (0, 0)
) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    s_in = 4.0 / 32768
    x = b.input((c.batch, *c.in_hwc), "int16", scale=s_in, zero_point=zero_points[0])
    w_scales = rng.uniform(0.003, 0.03, c.out_c) if c.per_channel else 0.013
    filt = rng.integers(-127, 128, (1, *c.kernel, c.out_c), dtype=np.int8)
    inputs = [x, b.const(filt, scale=w_scales, zero_point=0, axis=3)]
    if c.bias == "const":
        values = rng.integers(-(1 << 18), 1 << 18, c.out_c).astype(bias_type)
        inputs.append(b.const(values, scale=s_in * np.atleast_1d(w_scales)))
    elif c.bias == "omitted":
        inputs.append(-1)
    shape = (c.batch, *c.out_hw(), c.out_c)
    y = b.activation(shape, "int16", scale=0.0015, zero_point=zero_points[1])
    b.op("DEPTHWISE_CONV_2D", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("name", sorted(CASES))
def test_depthwise_int16_bit_exact(name: str) -> None:
    assert_matches_tflm(dw_int16(CASES[name], seed=len(name)))


def test_depthwise_int16_omitted_bias_matches_two_input_form() -> None:
    test_depthwise_omitted_bias_matches_two_input_form(dw_int16)


@pytest.mark.parametrize("zero_points", [(5, 0), (0, -1)])
def test_depthwise_int16_rejects_asymmetric_activations(zero_points: tuple[int, int]) -> None:
    with pytest.raises(UnsupportedError, match="DEPTHWISE_CONV_2D.*zero point"):
        lower_only(dw_int16(Dw(), zero_points=zero_points))


def test_depthwise_int16_rejects_int32_bias() -> None:
    """TFLM's 16x8 depthwise reads its bias as int64 whatever its type."""
    with pytest.raises(UnsupportedError, match="DEPTHWISE_CONV_2D.*int32"):
        lower_only(dw_int16(Dw(), bias_type="int32"))
