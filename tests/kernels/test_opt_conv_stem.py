"""The first-layer int8 CONV_2D (runtime_c/kernels/opt/conv_2d_stem_s8.c, mcugen/codegen/lower/
_conv_stem.py) against the reference kernels and TFLM bit for bit: one and three input channels
(and a depthwise layer of one input channel), filters of three rows and 1 to 5 columns, strides
1 to 3, SAME and VALID padding (band columns and rows outside the image), widths across several
strips and a last short one, output channel counts that are not multiples of 4 (zero channels
in the last group), activations that clamp, batches; and the weight layout itself."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower._conv_stem import stem_scratch_bytes, stem_weights, window_lanes
from support import SAME, SLOW, VALID, Conv, Dw, assert_variant_exact, conv_int8, dw_int8

VARIANT = "conv_2d_stem_s8"


@st.composite
def stems(draw: st.DrawFn) -> Conv:
    kernel = (3, draw(st.integers(1, 5)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = draw(st.sampled_from([SAME, VALID]))
    low = 1 if padding == SAME else 3
    return Conv(
        in_hwc=(
            draw(st.integers(low, 9)),
            draw(st.integers(max(low, kernel[1] if padding == VALID else 1), 27)),
            draw(st.sampled_from([1, 3])),
        ),
        out_c=draw(st.integers(1, 13)),
        kernel=kernel,
        stride=stride,
        padding=padding,
        act=draw(st.sampled_from([0, 0, 1, 3])),
        batch=draw(st.integers(1, 2)),
        bias=draw(st.booleans()),
        per_channel=draw(st.booleans()),
    )


@SLOW
@given(conv=stems(), seed=st.integers(0, 1000))
def test_stem_shapes(conv: Conv, seed: int) -> None:
    assert min(conv.out_hw()) >= 1, conv
    assert_variant_exact(conv_int8(conv, seed), VARIANT)


FIXED = {
    "vww_stem": Conv(in_hwc=(14, 20, 3), out_c=8, stride=(2, 2)),
    "ic_stem": Conv(in_hwc=(9, 17, 3), out_c=16, act=1),
    "odd_channels_full_range": Conv(in_hwc=(7, 11, 3), out_c=7, stride=(2, 2)),
    "one_channel_5_wide": Conv(in_hwc=(8, 19, 1), out_c=4, kernel=(3, 5), padding=VALID),
    "one_pixel": Conv(in_hwc=(1, 1, 3), out_c=4),
}


def test_fixed_shapes() -> None:
    for name, conv in sorted(FIXED.items()):
        assert_variant_exact(conv_int8(conv, seed=len(name)), VARIANT, samples=2)


def test_person_detect_like_depthwise() -> None:
    """A depthwise layer of one input channel and 8 outputs, stride 2 SAME, full range and
    clamped."""
    for act in (0, 3):
        case = Dw(in_hwc=(13, 18, 1), mult=8, stride=(2, 2), act=act)
        assert_variant_exact(dw_int8(case, seed=act), VARIANT)


def test_layout_and_scratch() -> None:
    """Lanes of a three-channel column: (a0, a2) (b0, b2) (c0, c2) (a1, b1) (c1, -); words per
    group: biases, chunks of four words channel by channel (the last chunk of the rest), then
    per channel multiplier, right shift, constant; the left shift folded into weights and bias."""
    lanes = window_lanes(3, 1)
    assert lanes == [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2), (0, 1), (1, 1), (2, 1), None]
    rows = np.arange(1, 10).reshape(1, 9)  # one channel, a 3x1 filter of three channels
    words = stem_weights(rows, ((5, 100, 1, 7, 64, -1),), 3, 1)
    assert words is not None
    pair = [(1 | 3 << 16) * 2, (4 | 6 << 16) * 2, (7 | 9 << 16) * 2, (2 | 5 << 16) * 2, 8 * 2]
    assert list(words[:4]) == [10, 0, 0, 0]
    assert list(words[4:8]) == pair[:4]  # the first channel's first chunk
    assert words[20] == pair[4]  # its last chunk, one word, after three zero channels' chunks
    assert list(words[24:27]) == [100, 7, 64]
    assert stem_weights(rows, ((5, 100, 1, 0, 64, 0),), 3, 1) is None  # right shift 0
    assert stem_weights(rows * 100, ((5, 100, 9, 7, 64, -1),), 3, 1) is None  # beyond int16
    assert stem_scratch_bytes(3, 3, 2, 48) == 4 * 17 * 5
    assert stem_scratch_bytes(1, 3, 1, 5) == 4 * 7 * 2
