"""The general int8 CONV_2D's 16-bit im2col kernel (runtime_c/kernels/opt/conv_2d_s8.c,
mcugen/codegen/lower/opt_conv_2d.py) on the shape classes its code paths split on, against the
reference kernels and TFLM bit for bit: input depths that are multiples of 4 (windows expanded
from the image, taps padded per tap or per row) and others (windows gathered as bytes), depths
below 4 (the tail word read byte by byte), odd output channel counts (the single-channel loop),
an odd number of output pixels (the last one alone), right shifts of 0 (the sign mask), and the
layout and the build's bounds themselves."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower.opt_conv_2d import conv_layout, exact_bounds, scratch_bytes
from support import SLOW, VALID, Conv, assert_variant_exact, conv_int8, conv_variant, window_convs

CONVS = window_convs(
    kernels=[(3, 3), (1, 1), (2, 2), (3, 1), (1, 2), (5, 3)],
    strides=[(1, 1), (2, 2), (2, 1)],
    dilations=[(1, 1), (1, 1), (2, 2), (1, 2)],
    grow=5,
    in_channels=st.sampled_from([1, 2, 3, 4, 5, 8, 12]),
    out_channels=7,
    out_scales=[0.16, 0.5, 4.0],
)


@SLOW
@given(conv=CONVS, seed=st.integers(0, 1000))
def test_conv_shape_classes(conv: Conv, seed: int) -> None:
    assert min(conv.out_hw()) >= 1, conv
    assert_variant_exact(conv_int8(conv, seed), conv_variant(conv))


FIXED = {
    "ic_stem_3ch": Conv(in_hwc=(9, 9, 3), out_c=16, act=1),
    "vww_stem_odd_pixels": Conv(in_hwc=(9, 7, 3), out_c=8, stride=(2, 2), act=3),
    "kws_stem_1ch": Conv(in_hwc=(21, 10, 1), out_c=6, kernel=(10, 4), stride=(2, 2), act=1),
    "depth_2_odd_channels": Conv(in_hwc=(5, 5, 2), out_c=3, kernel=(1, 1), stride=(2, 2)),
    "in_c_8_dilated": Conv(in_hwc=(8, 9, 8), out_c=5, dilation=(2, 2), act=1),
    "in_c_16_5x3_valid": Conv(in_hwc=(9, 6, 16), out_c=4, kernel=(5, 3), padding=VALID),
    "shift_0": Conv(in_hwc=(6, 5, 4), out_c=4, out_scale=0.0004, weight_max=2),
    "full_accumulators": Conv(in_hwc=(7, 7, 64), out_c=2, weight_max=127, out_scale=40.0),
}


def test_fixed_shapes() -> None:
    for name, conv in sorted(FIXED.items()):
        assert_variant_exact(conv_int8(conv, seed=len(name)), conv_variant(conv), samples=2)


def test_layout_keeps_every_weight_where_the_kernel_reads_it() -> None:
    """Tails first, then groups of four channels (each block: the first pair's word (k0, k2),
    the second's, then their (k1, k3) words), a last pair a.k0 b.k0 a.k2 b.k2 a.k1 b.k1 a.k3
    b.k3, then an odd channel."""
    rows = np.arange(3 * 6).reshape(3, 6)  # 3 channels, depth 6: one block and a tail of 2
    data = np.frombuffer(conv_layout(rows), dtype=np.int8)
    assert data.tolist() == [4, 5, 10, 11, 16, 17, 0, 6, 2, 8, 1, 7, 3, 9, 12, 13, 14, 15]
    rows = np.arange(6 * 4).reshape(6, 4)  # a group of four channels, then a pair
    data = np.frombuffer(conv_layout(rows), dtype=np.int8)
    quad = [0, 4, 2, 6, 8, 12, 10, 14, 1, 5, 3, 7, 9, 13, 11, 15]
    assert data.tolist() == quad + [16, 20, 18, 22, 17, 21, 19, 23]


def test_scratch_and_bounds() -> None:
    assert scratch_bytes(27, 3) == 16 * 7 + 28
    assert scratch_bytes(144, 16) == 16 * 36
    assert exact_bounds(2**20, 2**30, 1, 8, 2**7 - 128 * 2**8)
    assert not exact_bounds(2**30, 2**30, 1, 8, 0)  # the doubled accumulator leaves int32
    assert not exact_bounds(2**20, 2**30, 1, 31, 2**30 + 127 * 2**31)  # the constant does
