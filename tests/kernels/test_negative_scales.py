"""Negative and zero filter scales, as MIT HAN lab's mcunet_320kb_imagenet has on 158 channels of 13
convolutions: TFLM folds each channel's sign into its multiplier (QuantizeMultiplier keeps it), so
mcugen must accept such models and run them bit-exact, with the reference and the optimised
kernels; what TFLM refuses or aborts on (negative activation scales, a negative per-tensor
FULLY_CONNECTED filter scale, NaN) is still refused, naming the tensor and the scale."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.codegen import quant
from mcugen.errors import ModelError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import (
    assert_matches_tflm,
    mcugen_outputs,
    random_inputs,
    reference_kernels,
)

SAME = 0
NONE, RELU = 0, 1
WINDOW = {"padding": SAME, "stride_h": 1, "stride_w": 1}
DILATION = {"dilation_h_factor": 1, "dilation_w_factor": 1}


def signed_scales(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    """`n` scales in [lo, hi), every third one negative and, from 6 channels on, channel 4 zero
    (its multiplier is 0: the channel outputs its zero point)."""
    scales = rng.uniform(lo, hi, n) * np.where(np.arange(n) % 3 == 1, -1.0, 1.0)
    if n >= 6:
        scales[4] = 0.0
    return scales


def weights(
    b: GraphBuilder, rng: np.random.Generator, shape: tuple[int, ...], axis: int, in_scale: float
) -> tuple[int, int, np.ndarray]:
    """A per-channel int8 filter on `axis` with signed scales, and its int32 bias, whose scales
    are input scale x filter scale (negative where the filter's are, as the converter writes)."""
    channels = shape[axis]
    scales = signed_scales(rng, channels, 0.004, 0.02)
    filt = b.const(rng.integers(-127, 128, shape, dtype=np.int8), scale=scales, axis=axis)
    bias = b.const(rng.integers(-800, 800, channels, dtype=np.int32), scale=in_scale * scales)
    return filt, bias, scales


def mcunet_like(seed: int = 0) -> bytes:
    """CONV_2D 3x3 (RELU), CONV_2D 1x1, DEPTHWISE_CONV_2D 3x3 and a per-channel FULLY_CONNECTED,
    each with negative and zero filter and bias scales, every layer an output (compared). The
    scales keep most outputs inside the int8 range. The optimised depthwise kernel takes its
    negative multipliers (its SMMULR rounding is the same for both signs); the matrix-product
    variants admit only multipliers in [0, 2^31) (opt_mat_mult.kernel_requantizes), so the
    others keep the reference kernels."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, 6, 7, 3), "int8", scale=0.05, zero_point=-5)
    w, bias, _ = weights(b, rng, (8, 3, 3, 3), 0, 0.05)
    y1 = b.activation((1, 6, 7, 8), "int8", scale=0.25, zero_point=-128)
    b.op("CONV_2D", [x, w, bias], [y1], **WINDOW, **DILATION, fused_activation_function=RELU)
    w, bias, _ = weights(b, rng, (6, 1, 1, 8), 0, 0.25)
    y2 = b.activation((1, 6, 7, 6), "int8", scale=0.2, zero_point=4)
    b.op("CONV_2D", [y1, w, bias], [y2], **WINDOW, **DILATION, fused_activation_function=NONE)
    w, bias, _ = weights(b, rng, (1, 3, 3, 6), 3, 0.2)
    y3 = b.activation((1, 6, 7, 6), "int8", scale=0.4, zero_point=-3)
    b.op("DEPTHWISE_CONV_2D", [y2, w, bias], [y3], **WINDOW, **DILATION, depth_multiplier=1)
    w, bias, _ = weights(b, rng, (10, 6 * 7 * 6), 0, 0.4)
    y4 = b.activation((1, 10), "int8", scale=6.0, zero_point=2)
    b.op("FULLY_CONNECTED", [y3, w, bias], [y4], fused_activation_function=NONE)
    b.output(y1, y2, y3, y4)
    return b.tflite()


def conv_int16(bias_type: str, seed: int = 1) -> bytes:
    """TFLM's 16x8 CONV_2D with signed scales: its int64 rescale (bias int64) only asserts the
    multiplier is non-negative in debug builds; the int32 one (bias int32) applies it as it is."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    s_in = 4.0 / 32768
    x = b.input((1, 5, 6, 3), "int16", scale=s_in, zero_point=0)
    scales = signed_scales(rng, 6, 0.004, 0.02)
    w = b.const(rng.integers(-127, 128, (6, 3, 3, 3), dtype=np.int8), scale=scales, axis=0)
    values = rng.integers(-(1 << 16), 1 << 16, 6).astype(bias_type)
    bias = b.const(values, scale=s_in * scales)
    y = b.activation((1, 5, 6, 6), "int16", scale=4e-4, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], **WINDOW, **DILATION)
    b.output(y)
    return b.tflite()


def transpose_conv_int8(seed: int = 2) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    shape = b.const(np.array((1, 8, 10, 4), np.int32))
    x = b.input((1, 4, 5, 3), "int8", scale=0.05, zero_point=-6)
    w, bias, _ = weights(b, rng, (4, 3, 3, 3), 0, 0.05)
    y = b.activation((1, 8, 10, 4), "int8", scale=0.16, zero_point=2)
    b.op("TRANSPOSE_CONV", [shape, w, x, bias], [y], padding=SAME, stride_h=2, stride_w=2)
    b.output(y)
    return b.tflite()


def test_negative_filter_scales_run_bit_exact_with_the_optimised_and_reference_kernels() -> None:
    """Refused as "scales must be finite and positive" before; TFLM runs it."""
    model = mcunet_like()
    gen = generate(import_model(model, source="test model"))
    assert "depthwise_conv_2d_s8" in {low.variant for low in gen.lowered.values()}
    inputs = [random_inputs(gen.graph, seed) for seed in range(4)]
    result = assert_matches_tflm(model, inputs=inputs)
    assert result.samples == 4
    reference = mcugen_outputs(model, inputs, reference_kernels)
    optimised = mcugen_outputs(model, inputs)
    for ref_row, opt_row in zip(reference, optimised, strict=True):
        assert all(np.array_equal(r, o) for r, o in zip(ref_row, opt_row, strict=True))
    for j in range(4):  # each layer's outputs mostly inside the range: the comparison means much
        values = np.concatenate([row[j].ravel() for row in optimised])
        assert np.mean((values > -128) & (values < 127)) > 0.4


@pytest.mark.parametrize("bias_type", ["int64", "int32"])
def test_negative_filter_scales_of_a_16x8_convolution_run_bit_exact(bias_type: str) -> None:
    assert_matches_tflm(conv_int16(bias_type))


def test_negative_filter_scales_of_a_transpose_conv_run_bit_exact() -> None:
    assert_matches_tflm(transpose_conv_int8())


def test_a_per_tensor_negative_conv_filter_scale_runs_bit_exact() -> None:
    """One negative scale for every channel: the reference's per-channel loop broadcasts it."""
    rng = np.random.default_rng(3)
    b = GraphBuilder()
    x = b.input((1, 5, 5, 2), "int8", scale=0.05, zero_point=1)
    w = b.const(rng.integers(-127, 128, (4, 3, 3, 2), dtype=np.int8), scale=-0.01)
    bias = b.const(rng.integers(-500, 500, 4, dtype=np.int32), scale=-0.0005)
    y = b.activation((1, 5, 5, 4), "int8", scale=0.08, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], **WINDOW, **DILATION)
    b.output(y)
    assert_matches_tflm(b.tflite())


def test_verify_on_the_host_accepts_negative_filter_scales(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's command: `mcugen verify MODEL --board host`."""
    path = tmp_path / "negative_scales.tflite"
    path.write_bytes(mcunet_like(seed=5))
    assert main(["verify", str(path), "--board", "host"]) == 0, capsys.readouterr().err
    assert "all outputs match TFLM" in capsys.readouterr().out


# --- what is still refused ---------------------------------------------------------------------


def fc_per_tensor(filter_scale: float) -> bytes:
    rng = np.random.default_rng(4)
    b = GraphBuilder()
    x = b.input((1, 12), "int8", scale=0.05, zero_point=0)
    w = b.const(rng.integers(-127, 128, (4, 12), dtype=np.int8), scale=filter_scale)
    bias = b.const(rng.integers(-500, 500, 4, dtype=np.int32), scale=0.05 * abs(filter_scale))
    y = b.activation((1, 4), "int8", scale=0.1, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, bias], [y])
    b.output(y)
    return b.tflite()


def refusal(model: bytes) -> str:
    with pytest.raises(ModelError) as info:
        import_model(model, source="m.tflite")
    return info.value.line()


def test_a_negative_per_tensor_fully_connected_filter_scale_is_refused_as_tflm_does() -> None:
    """GetQuantizedConvolutionMultipler refuses input_scale * filter_scale < 0; zero passes."""
    from tflite_micro import runtime

    model = fc_per_tensor(-0.01)
    with pytest.raises(RuntimeError):
        runtime.Interpreter.from_bytes(model, arena_size=1 << 16)
    line = refusal(model)
    assert "tensor 1 (t1) has quantization scale -0.01" in line
    assert "not negative" in line
    import_model(fc_per_tensor(0.0))


@pytest.mark.parametrize("tensor", [0, 3])
def test_negative_activation_scales_are_refused(tensor: int) -> None:
    """TFLM's element-wise kernels abort on them; mcugen refuses them on every operator."""
    b = GraphBuilder()
    scales = [0.05, 0.05]
    scales[0 if tensor == 0 else 1] = -0.05
    x = b.input((1, 4, 4, 2), "int8", scale=scales[0], zero_point=0)
    w = b.const(np.ones((2, 1, 1, 2), np.int8), scale=[0.01, -0.01], axis=0)
    bias = b.const(np.zeros(2, np.int32), scale=[0.0005, -0.0005])
    y = b.activation((1, 4, 4, 2), "int8", scale=scales[1], zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], **WINDOW, **DILATION)
    b.output(y)
    line = refusal(b.tflite())
    assert f"tensor {tensor} (t{tensor}) has quantization scale -0.05" in line
    assert "finite and positive" in line


def test_a_negative_scale_on_a_constant_another_operator_reads_is_refused() -> None:
    """The filter is also ADD's operand: ADD divides by its scale."""
    b = GraphBuilder()
    x = b.input((1, 1, 1, 2), "int8", scale=0.05, zero_point=0)
    w = b.const(np.ones((2, 1, 1, 2), np.int8), scale=[0.01, -0.01], axis=0)
    y = b.activation((1, 1, 1, 2), "int8", scale=0.05, zero_point=0)
    b.op("CONV_2D", [x, w, -1], [y], **WINDOW, **DILATION)
    z = b.activation((2, 1, 1, 2), "int8", scale=0.05, zero_point=0)
    b.op("ADD", [y, w], [z])
    b.output(z)
    assert "tensor 1 (t1) has quantization scale -0.01 (scale 1 of 2)" in refusal(b.tflite())


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_filter_scale_that_is_not_finite_is_refused_naming_its_channel(bad: float) -> None:
    b = GraphBuilder()
    x = b.input((1, 4, 4, 2), "int8", scale=0.05, zero_point=0)
    w = b.const(np.ones((3, 1, 1, 2), np.int8), scale=[0.01, -0.01, bad], axis=0)
    y = b.activation((1, 4, 4, 3), "int8", scale=0.05, zero_point=0)
    b.op("CONV_2D", [x, w, -1], [y], **WINDOW, **DILATION)
    b.output(y)
    line = refusal(b.tflite())
    assert f"tensor 1 (t1) has quantization scale {bad} (scale 2 of 3)" in line
    assert "must be finite" in line


def test_a_multiplier_of_minus_two_to_the_31_runs_bit_exact() -> None:
    """input scale (1 + 2^-23) x filter scale -(1 - 2^-23) / output scale 1 = -(1 - 2^-46): TFLM's
    QuantizeMultiplier rounds it to -2^31 and keeps it (only +2^31 is halved), so the C arrays
    hold INT32_MIN; channel 1 has the positive twin, which becomes 2^30 with shift 1."""
    s_in, s_w = 1.0 + 2.0**-23, 1.0 - 2.0**-23
    assert quant.quantize_multiplier(s_in * -s_w) == (-(2**31), 0)
    assert quant.quantize_multiplier(s_in * s_w) == (2**30, 1)
    rng = np.random.default_rng(6)
    b = GraphBuilder()
    x = b.input((1, 3, 4, 2), "int8", scale=s_in, zero_point=0)
    w = b.const(rng.integers(-20, 21, (2, 1, 1, 2), dtype=np.int8), scale=[-s_w, s_w], axis=0)
    y = b.activation((1, 3, 4, 2), "int8", scale=1.0, zero_point=0)
    b.op("CONV_2D", [x, w, -1], [y], **WINDOW, **DILATION)
    b.output(y)
    model = b.tflite()
    inputs = [[rng.integers(-3, 4, (1, 3, 4, 2), dtype=np.int8)] for _ in range(3)]
    assert_matches_tflm(model, inputs=inputs)
    assert_matches_tflm(model, inputs=inputs, generate_fn=reference_kernels)
