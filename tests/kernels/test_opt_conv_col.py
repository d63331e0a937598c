"""The general int8 CONV_2D's rungs for memory (mcugen/codegen/lower/opt_conv_2d.py):
conv_2d_s8_col2 (runtime_c/kernels/opt/conv_2d_s8_col2.c: two pixels' windows of bytes as scratch)
and conv_2d_s8_col (conv_2d_s8_col.c: one), widened in registers. Speed first never picks them
(conv_2d_s8 and the stem kernel take their layers first), so each test removes the kernels ahead
of the one it tests from the registry (`only`), checks that it was selected, then that its outputs
equal the reference kernel's and TFLM's bit for bit, on the shape classes their paths split on:
groups of four output channels, a pair and an odd one left, depths not multiples of 4 (the tail
word) and below 4 (no whole block), windows inside the image, on its edges and dilated, an odd
number of pixels (col2's last pixel alone); and that the memory ladder puts them between
conv_2d_s8 and the reference kernel."""

from __future__ import annotations

from contextlib import AbstractContextManager

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower import lower
from mcugen.codegen.lower.opt_conv_2d import col_scratch_bytes, scratch_bytes
from mcugen.kernel_choice import ladder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import (
    SLOW,
    VALID,
    Conv,
    assert_variant_exact,
    conv_int8,
    window_convs,
    without_variants,
)

COL = "conv_2d_s8_col"
COL2 = "conv_2d_s8_col2"
#: per rung, the variants registered before it that take its layers
AHEAD = {
    COL2: frozenset({"conv_2d_s8", "conv_2d_stem_s8"}),
    COL: frozenset({"conv_2d_s8", "conv_2d_stem_s8", COL2}),
}


def only(rung: str) -> AbstractContextManager[None]:
    """The variant registry without the kernels `rung` follows on a ladder."""
    return without_variants(AHEAD[rung])


CONVS = window_convs(
    kernels=[(3, 3), (1, 1), (2, 2), (3, 1), (10, 4), (5, 3)],
    strides=[(1, 1), (2, 2), (2, 1)],
    dilations=[(1, 1), (1, 1), (2, 2), (1, 2)],
    grow=5,
    in_channels=st.sampled_from([1, 2, 3, 4, 5, 8, 12]),
    out_channels=11,
    out_scales=[0.16, 0.5, 4.0],
)


@SLOW
@given(conv=CONVS, seed=st.integers(0, 1000), rung=st.sampled_from([COL, COL2]))
def test_col_shape_classes(conv: Conv, seed: int, rung: str) -> None:
    with only(rung):
        assert_variant_exact(conv_int8(conv, seed), rung)


FIXED = {
    "kws_first_layer": Conv(in_hwc=(21, 10, 1), out_c=12, kernel=(10, 4), stride=(2, 2), act=1),
    "ic_stem_3ch_quads_pair_one": Conv(in_hwc=(9, 9, 3), out_c=7, act=3),
    "depth_2": Conv(in_hwc=(5, 5, 2), out_c=6, kernel=(1, 1), stride=(2, 2)),
    "in_c_8_dilated": Conv(in_hwc=(8, 9, 8), out_c=5, dilation=(2, 2), act=1),
    "in_c_16_5x3_valid": Conv(in_hwc=(9, 6, 16), out_c=8, kernel=(5, 3), padding=VALID),
    "shift_0": Conv(in_hwc=(6, 5, 4), out_c=4, out_scale=0.0004, weight_max=2),
    "full_accumulators": Conv(in_hwc=(7, 7, 64), out_c=2, weight_max=127, out_scale=40.0),
}


@pytest.mark.parametrize("rung", [COL, COL2])
def test_fixed_shapes(rung: str) -> None:
    with only(rung):
        for name, conv in sorted(FIXED.items()):
            assert_variant_exact(conv_int8(conv, seed=len(name)), rung, samples=2)


@pytest.mark.parametrize("rung", [COL, COL2])
def test_batches_and_per_tensor_weights(rung: str) -> None:
    """Two batches of an odd number of pixels each (col2 pairs pixels across the batches)."""
    conv = Conv(in_hwc=(5, 5, 3), out_c=9, kernel=(3, 3), stride=(2, 1), batch=2, act=1)
    per_tensor = Conv(in_hwc=(6, 5, 4), out_c=6, kernel=(2, 2), per_channel=False)
    with only(rung):
        assert_variant_exact(conv_int8(conv, seed=5), rung, samples=2)
        assert_variant_exact(conv_int8(per_tensor, seed=6), rung, samples=2)


def test_ladder_puts_them_between_the_fast_kernel_and_the_reference() -> None:
    """KWS's first layer's shape: conv_2d_s8 (its pair's 16-bit window and a byte window), then
    col2 (two byte windows: 80 bytes), col (one: 40 bytes), then conv_2d_s8_lean (none:
    test_opt_conv_lean.py)."""
    conv = Conv(in_hwc=(49, 10, 1), out_c=64, kernel=(10, 4), stride=(2, 2))
    gen = generate(import_model(conv_int8(conv), source="test model"))
    op = next(o.index for o in gen.graph.operators if o.opcode == "CONV_2D")
    fastest = gen.lowered[op]
    rungs = ladder(gen.graph, op, fastest, "cortex-m4")
    assert [r.variant for r in rungs] == ["conv_2d_s8", COL2, COL, "conv_2d_s8_lean"]
    assert [r.scratch_bytes for r in rungs] == [scratch_bytes(40, 1), 80, 40, 0]
    assert col_scratch_bytes(40) == 40 and col_scratch_bytes(27) == 28
    assert lower(gen.graph, gen.graph.operators[op]).variant == "reference"
