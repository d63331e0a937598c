"""The general int8 CONV_2D variant (mcugen/codegen/lower/opt_conv_2d.py,
runtime_c/kernels/opt/conv_2d_s8.c) against the reference kernels and TFLM on random shapes:
filters 1x3, 3x3, 5x5, 10x4 and 1x1 with a stride, strides 1 and 2, SAME and VALID, dilation,
odd widths, channel counts not multiples of 2 or 4, batches, activations, per-tensor and
per-channel weights. Each case checks the variant was selected, then opt == reference == TFLM
bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower import lower_for
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from support import (
    SAME,
    SLOW,
    VALID,
    Conv,
    assert_variant_exact,
    conv_int8,
    conv_variant,
    window_convs,
)

KERNELS = [(1, 3), (3, 3), (5, 5), (10, 4), (3, 1), (1, 1)]


def fits(conv: Conv) -> bool:
    """VALID needs the (dilated) filter inside the input; every output dimension at least 1."""
    return min(conv.out_hw()) >= 1


STRIDES = [(1, 1), (2, 2), (1, 2), (2, 1)]
DILATIONS = [(1, 1), (1, 1), (2, 2), (2, 1)]
CONVS = window_convs(KERNELS, STRIDES, DILATIONS, 6, st.integers(1, 11), 9)


@SLOW
@given(conv=CONVS, seed=st.integers(0, 1000))
def test_conv_variant(conv: Conv, seed: int) -> None:
    assert fits(conv), conv
    assert_variant_exact(conv_int8(conv, seed), conv_variant(conv))


FIXED = {
    "resnet_3x3_s1": Conv(in_hwc=(8, 7, 16), out_c=16, act=1),
    "resnet_3x3_s2": Conv(in_hwc=(8, 8, 16), out_c=32, stride=(2, 2), act=1),
    "resnet_1x1_s2": Conv(in_hwc=(8, 8, 16), out_c=32, kernel=(1, 1), stride=(2, 2)),
    "vww_stem": Conv(in_hwc=(12, 12, 3), out_c=8, stride=(2, 2), act=3),
    "kws_stem": Conv(in_hwc=(49, 10, 1), out_c=8, kernel=(10, 4), stride=(2, 2), act=1),
    "dilated_5x5_valid": Conv(in_hwc=(13, 11, 5), kernel=(5, 5), dilation=(2, 2), padding=VALID),
}


def test_fixed_shapes() -> None:
    """The MLPerf stems and ResNet-8's blocks in small, then a dilated valid 5x5."""
    for name, conv in sorted(FIXED.items()):
        assert_variant_exact(conv_int8(conv, seed=len(name)), conv_variant(conv), samples=1)


def lowered(conv: Conv) -> list[tuple[str, int]]:
    graph = import_model(conv_int8(conv), source="test")
    return [
        (low.variant, low.scratch_bytes) for low in (lower_for(graph, op) for op in graph.operators)
    ]


def test_scratch_and_choice() -> None:
    """Two windows in 16-bit lanes (16 bytes per block of four depth values, the last padded),
    plus one window of bytes when in_c is not a multiple of 4; 1x1 stride 1 stays with
    conv_2d_1x1_s8; a grouped convolution with the reference."""
    assert lowered(Conv(in_hwc=(6, 6, 5), out_c=4)) == [("conv_2d_s8", 16 * 12 + 48)]
    # a stem: a band of (6 - 1) * 1 + 3 columns of five words
    assert lowered(Conv(in_hwc=(6, 6, 3), out_c=4)) == [("conv_2d_stem_s8", 8 * 5 * 4)]
    assert lowered(Conv(in_hwc=(6, 6, 4), kernel=(1, 1), stride=(2, 2))) == [("conv_2d_s8", 16)]
    assert lowered(Conv(in_hwc=(6, 6, 4), kernel=(1, 3), padding=VALID)) == [("conv_2d_s8", 48)]
    assert lowered(Conv(in_hwc=(6, 6, 4), kernel=(1, 3))) == [("conv_2d_s8", 48)]
    assert lowered(Conv(in_hwc=(6, 6, 4), kernel=(1, 1))) == [("conv_2d_1x1_s8", 16)]
    assert lowered(Conv(in_hwc=(6, 6, 8), out_c=6, groups=2)) == [("reference", 0)]


def test_zero_point_extremes() -> None:
    """Pads written as zero point -128 and 127 (the two ends of int8), by the stem kernel."""
    rng = np.random.default_rng(3)
    for zp in (-128, 127):
        b = GraphBuilder()
        x = b.input((1, 5, 6, 3), "int8", scale=0.03, zero_point=zp)
        wt = b.const(rng.integers(-127, 128, (4, 3, 3, 3), dtype=np.int8), scale=0.01)
        y = b.activation((1, 5, 6, 4), "int8", scale=0.1, zero_point=0)
        b.op("CONV_2D", [x, wt, -1], [y], padding=SAME, stride_h=1, stride_w=1)
        b.output(y)
        assert_variant_exact(b.tflite(), "conv_2d_stem_s8", samples=2)
