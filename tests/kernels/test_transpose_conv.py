"""TRANSPOSE_CONV against TFLM: int8 (per-channel and per-tensor) and int16 x int8 (int64, int16 or
no bias) bit-exact, float32 close."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from support import assert_matches_tflm

SAME, VALID = 0, 1
NONE, RELU, RELU6 = 0, 1, 3


@dataclass(frozen=True)
class Tc:
    in_hwc: tuple[int, int, int] = (4, 5, 3)
    out_c: int = 4
    kernel: tuple[int, int] = (3, 3)
    stride: tuple[int, int] = (2, 2)
    padding: int = SAME
    act: int = NONE
    batch: int = 1
    bias: str = "const"  # "const"; "absent": three inputs; "omitted": fourth input -1
    per_channel: bool = True

    def out_hw(self) -> tuple[int, int]:
        """The size TensorFlow's conv2d_transpose gives: in * stride (SAME) or more (VALID)."""
        dims = []
        for i in range(2):
            size = self.in_hwc[i] * self.stride[i]
            if self.padding == VALID:
                size += max(self.kernel[i] - self.stride[i], 0)
            dims.append(size)
        return dims[0], dims[1]

    def out_shape(self) -> tuple[int, int, int, int]:
        return (self.batch, *self.out_hw(), self.out_c)

    def options(self) -> dict[str, int]:
        return {
            "padding": self.padding,
            "stride_h": self.stride[0],
            "stride_w": self.stride[1],
            "fused_activation_function": self.act,
        }

    def filter_shape(self) -> tuple[int, int, int, int]:
        return (self.out_c, *self.kernel, self.in_hwc[2])


def _bias_input(b: GraphBuilder, c: Tc, values: np.ndarray, scale: object) -> list[int]:
    if c.bias == "const":
        return [b.const(values, scale=scale)]
    return [-1] if c.bias == "omitted" else []


def tc_int8(c: Tc, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    shape = b.const(np.array(c.out_shape(), np.int32))
    x = b.input((c.batch, *c.in_hwc), "int8", scale=0.05, zero_point=-6)
    w_scales = rng.uniform(0.003, 0.03, c.out_c) if c.per_channel else 0.017
    filt = rng.integers(-127, 128, c.filter_shape(), dtype=np.int8)
    w = b.const(filt, scale=w_scales, zero_point=0, axis=0)
    bias = rng.integers(-2000, 2000, c.out_c, dtype=np.int32)
    inputs = [shape, w, x, *_bias_input(b, c, bias, 0.05 * np.atleast_1d(w_scales))]
    y = b.activation(c.out_shape(), "int8", scale=0.16, zero_point=2)
    b.op("TRANSPOSE_CONV", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


def tc_f32(c: Tc, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    shape = b.const(np.array(c.out_shape(), np.int32))
    x = b.input((c.batch, *c.in_hwc), "float32")
    w = b.const(rng.standard_normal(c.filter_shape()).astype(np.float32))
    bias = rng.standard_normal(c.out_c).astype(np.float32)
    inputs = [shape, w, x, *_bias_input(b, c, bias, None)]
    y = b.activation(c.out_shape(), "float32")
    b.op("TRANSPOSE_CONV", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


CASES = {
    "3x3_same_s2": Tc(),
    "3x3_same_s2_relu": Tc(act=RELU),
    "3x3_valid_s2_relu6": Tc(padding=VALID, act=RELU6),
    "2x2_same_s2": Tc(kernel=(2, 2), in_hwc=(5, 3, 6), out_c=3),
    "4x4_same_s2_even_pad": Tc(kernel=(4, 4)),
    "3x3_same_s1": Tc(stride=(1, 1), in_hwc=(6, 7, 2)),
    "nonsquare_3x2_s2x1_valid": Tc(kernel=(3, 2), stride=(2, 1), padding=VALID),
    "1x1_s1": Tc(kernel=(1, 1), stride=(1, 1), in_hwc=(3, 4, 8), out_c=5),
    "batch2": Tc(batch=2, act=RELU),
    "no_bias_absent": Tc(bias="absent"),
    "no_bias_omitted": Tc(bias="omitted"),
    "per_tensor": Tc(per_channel=False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_transpose_conv_int8_bit_exact(name: str) -> None:
    assert_matches_tflm(tc_int8(CASES[name], seed=len(name)))


FLOAT_CASES = [
    "3x3_same_s2_relu",
    "3x3_valid_s2_relu6",
    "4x4_same_s2_even_pad",
    "nonsquare_3x2_s2x1_valid",
    "batch2",
    "no_bias_omitted",
]


@pytest.mark.parametrize("name", FLOAT_CASES)
def test_transpose_conv_float32_close(name: str) -> None:
    assert_matches_tflm(tc_f32(CASES[name], seed=len(name)))


def test_transpose_conv_int8_requests_int32_scratch() -> None:
    graph = import_model(tc_int8(Tc()), source="test model")
    lowered = lower(graph, graph.operators[0])
    assert lowered.scratch_bytes == 4 * int(np.prod(Tc().out_shape()))


def test_transpose_conv_rejects_depth_mismatch() -> None:
    b = GraphBuilder()
    shape = b.const(np.array([1, 8, 8, 2], np.int32))
    x = b.input((1, 4, 4, 3), "float32")
    w = b.const(np.ones((2, 3, 3, 4), np.float32))
    y = b.activation((1, 8, 8, 2), "float32")
    b.op("TRANSPOSE_CONV", [shape, w, x], [y], padding=SAME, stride_h=2, stride_w=2)
    b.output(y)
    graph = import_model(b.tflite(), source="test model")
    with pytest.raises(UnsupportedError, match="TRANSPOSE_CONV"):
        lower(graph, graph.operators[0])


# --- int16 activations, int8 weights (TFLM's 16x8 path, int64 accumulator) ----------------------


@dataclass(frozen=True)
class Q16:
    """The 16x8 model's quantization: `bias` is the bias type ("int64", "int16", "int32", "int8")
    or None; `bias_range` bounds its values; `out_scale` sets how often outputs saturate."""

    bias: str | None = "int64"
    bias_range: int = 1 << 18
    out_scale: float = 8e-4
    zero_points: tuple[int, int] = (0, 0)
    options: tuple[tuple[str, int], ...] = ()


def tc_int16(c: Tc, q: Q16 = Q16(), seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    s_in = 4.0 / 32768
    shape = b.const(np.array(c.out_shape(), np.int32))
    x = b.input((c.batch, *c.in_hwc), "int16", scale=s_in, zero_point=q.zero_points[0])
    w_scales = rng.uniform(0.002, 0.02, c.out_c) if c.per_channel else 0.011
    filt = rng.integers(-127, 128, c.filter_shape(), dtype=np.int8)
    w = b.const(filt, scale=w_scales, zero_point=0, axis=0)
    inputs = [shape, w, x]
    if q.bias is not None and c.bias == "const":
        values = rng.integers(-q.bias_range, q.bias_range, c.out_c, dtype=np.int64)
        inputs.append(b.const(values.astype(q.bias), scale=s_in * np.atleast_1d(w_scales)))
    elif c.bias == "omitted":
        inputs.append(-1)
    y = b.activation(c.out_shape(), "int16", scale=q.out_scale, zero_point=q.zero_points[1])
    b.op("TRANSPOSE_CONV", inputs, [y], **(c.options() | dict(q.options)))
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("name", sorted(CASES))
def test_transpose_conv_int16_bit_exact(name: str) -> None:
    assert_matches_tflm(tc_int16(CASES[name], seed=len(name)))


#: quantized_bias_type INT32 (TFLite schema): TFLM's 16x8 transpose convolution ignores it.
BIAS_TYPE_INT32 = (("quantized_bias_type", 2),)

INT16_VARIANTS = {
    "int16_bias": Q16(bias="int16", bias_range=1 << 15),
    "int64_bias_large": Q16(bias_range=1 << 40, out_scale=0.5),
    "saturating": Q16(out_scale=1e-5),
    "left_shift": Q16(out_scale=1e-7),  # rescale > 1: shifts up to 7 left
    "no_bias_acc32_option": Q16(bias=None, options=BIAS_TYPE_INT32),
    "int64_bias_acc32_option": Q16(options=BIAS_TYPE_INT32),
    "coarse_output": Q16(out_scale=0.05),
}


@pytest.mark.parametrize("variant", sorted(INT16_VARIANTS))
@pytest.mark.parametrize("name", ["3x3_same_s2_relu", "nonsquare_3x2_s2x1_valid", "per_tensor"])
def test_transpose_conv_int16_variants(name: str, variant: str) -> None:
    assert_matches_tflm(tc_int16(CASES[name], INT16_VARIANTS[variant], seed=len(variant)))


def test_transpose_conv_int16_requests_int64_scratch() -> None:
    graph = import_model(tc_int16(Tc()), source="test model")
    lowered = lower(graph, graph.operators[0])
    assert lowered.function == "mcu_transpose_conv_int16"
    assert lowered.scratch_bytes == 8 * int(np.prod(Tc().out_shape()))


#: (variant, what the one-line message must say)
REJECTED_16X8 = {
    "int32_bias": (Q16(bias="int32"), "int32 bias"),  # TFLM reads it as int64, past its end
    "int8_bias": (Q16(bias="int8"), "int8 bias"),
    "input_zero_point": (Q16(zero_points=(3, 0)), "non-zero zero point"),
    "output_zero_point": (Q16(zero_points=(0, -2)), "non-zero zero point"),
    "bias_beyond_2^47": (Q16(bias_range=1 << 48), "2\\^47"),  # beyond TFLM's int64 rescale
    "left_shift_8": (Q16(out_scale=1e-9), "shift outside"),
}


@pytest.mark.parametrize("variant", sorted(REJECTED_16X8))
def test_transpose_conv_int16_rejects(variant: str) -> None:
    q, message = REJECTED_16X8[variant]
    graph = import_model(tc_int16(Tc(), q), source="test model")
    with pytest.raises(UnsupportedError, match=f"TRANSPOSE_CONV.*{message}"):
        lower(graph, graph.operators[0])


def test_transpose_conv_int16_rejects_int16_weights() -> None:
    """TFLM's Prepare lets int16 weights through (same type as the input), then reads them as
    int8."""
    b = GraphBuilder()
    shape = b.const(np.array([1, 8, 8, 2], np.int32))
    x = b.input((1, 4, 4, 3), "int16", scale=1e-4, zero_point=0)
    w = b.const(np.ones((2, 3, 3, 3), np.int16), scale=0.01, zero_point=0)
    y = b.activation((1, 8, 8, 2), "int16", scale=1e-3, zero_point=0)
    b.op("TRANSPOSE_CONV", [shape, w, x], [y], padding=SAME, stride_h=2, stride_w=2)
    b.output(y)
    graph = import_model(b.tflite(), source="test model")
    with pytest.raises(UnsupportedError, match="TRANSPOSE_CONV.*int16"):
        lower(graph, graph.operators[0])
