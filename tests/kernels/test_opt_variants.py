"""The optimised kernel variants (mcugen/codegen/lower/_variants.py, runtime_c/kernels/opt/)
against the reference kernels and TFLM on random shapes: each case checks that the variant was
selected, then that its outputs equal the reference kernels' and TFLM's bit for bit. Channel
counts and depths not multiples of 2 or 4, odd widths, batches, activations, per-tensor and
per-channel weights, and the in-place 1x1 convolution are covered."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import SLOW, Conv, add_chains, assert_variant_exact, conv_int8, runs_in_place
from support.op_models import fc_models


@SLOW
@given(model=fc_models())
def test_fully_connected_variant(model: bytes) -> None:
    assert_variant_exact(model, "fully_connected_s8")


@SLOW
@given(
    hw=st.tuples(st.integers(1, 5), st.integers(1, 6)),
    in_c=st.integers(1, 19),
    out_c=st.integers(1, 11),
    batch=st.integers(1, 2),
    act=st.sampled_from([0, 1, 3]),
    per_channel=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_conv_1x1_variant(
    hw: tuple[int, int],
    in_c: int,
    out_c: int,
    batch: int,
    act: int,
    per_channel: bool,
    seed: int,
) -> None:
    conv = Conv(
        in_hwc=(*hw, in_c),
        out_c=out_c,
        kernel=(1, 1),
        act=act,
        batch=batch,
        per_channel=per_channel,
    )
    assert_variant_exact(conv_int8(conv, seed), "conv_2d_1x1_s8")


def chain_1x1(in_c: int, mid_c: int, out_c: int) -> bytes:
    """x -> 1x1 (in_c -> mid_c) -> 1x1 (mid_c -> out_c): the second may run in place over the
    first's output, which dies there."""
    rng = np.random.default_rng(in_c * 100 + out_c)
    b = GraphBuilder()
    x = b.input((1, 5, 7, in_c), "int8", scale=0.04, zero_point=-9)
    prev, prev_c = x, in_c
    for c in (mid_c, out_c):
        w = b.const(rng.integers(-127, 128, (c, 1, 1, prev_c), dtype=np.int8), scale=0.01)
        y = b.activation((1, 5, 7, c), "int8", scale=0.2, zero_point=3)
        b.op("CONV_2D", [prev, w, -1], [y], padding=0, stride_h=1, stride_w=1)
        prev, prev_c = y, c
    b.output(prev)
    return b.tflite()


def test_conv_1x1_variant_in_place_both_directions() -> None:
    """Fewer outputs than inputs (first pixel first) and more (last pixel first)."""
    for mid_c, out_c in ((12, 5), (5, 12)):
        gen = assert_variant_exact(chain_1x1(3, mid_c, out_c), "conv_2d_1x1_s8", samples=2)
        assert runs_in_place(gen, 1), (mid_c, out_c)


def test_shared_weights_keep_the_reference_kernel() -> None:
    """A weight tensor two operators read cannot be laid out for one of them."""
    rng = np.random.default_rng(0)
    b = GraphBuilder()
    x = b.input((2, 8), "int8", scale=0.05, zero_point=1)
    w = b.const(rng.integers(-127, 128, (8, 8), dtype=np.int8), scale=0.02)
    h = b.activation((2, 8), "int8", scale=0.3, zero_point=0)
    y = b.activation((2, 8), "int8", scale=0.3, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, -1], [h])
    b.op("FULLY_CONNECTED", [h, w, -1], [y])
    b.output(y)
    gen = generate(import_model(b.tflite(), source="shared"))
    assert {low.variant for low in gen.lowered.values()} == {"reference"}


@SLOW
@given(model=add_chains(1, 6, (0.002, 0.5)))
def test_add_variant(model: bytes) -> None:
    assert_variant_exact(model, "add_s8", samples=3)


def test_add_variant_broadcasting_keeps_the_reference() -> None:
    b = GraphBuilder()
    x1 = b.input((1, 4, 4, 3), "int8", scale=0.1, zero_point=2)
    x2 = b.input((1, 1, 1, 3), "int8", scale=0.2, zero_point=-3)
    y = b.activation((1, 4, 4, 3), "int8", scale=0.3, zero_point=1)
    b.op("ADD", [x1, x2], [y])
    b.output(y)
    gen = generate(import_model(b.tflite(), source="broadcast"))
    assert {low.variant for low in gen.lowered.values()} == {"reference"}
