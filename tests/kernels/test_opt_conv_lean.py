"""The general int8 CONV_2D's rung with no scratch, conv_2d_s8_lean (runtime_c/kernels/opt/
conv_2d_s8_lean.c, mcugen/codegen/lower/opt_conv_lean.py): the input and the filter read where
they are, taps in the padding skipped, the input offset added to each input. Speed first never
picks it, so each test removes the kernels ahead of it from the registry, checks that it was
selected, then that its outputs equal the reference kernel's and TFLM's bit for bit, on the
shape classes its paths split on: runs of whole words, a last 1 to 3 bytes and no whole word
(in_c 1, 2, 3, 4, 8, 16 and odd filter widths), windows inside the image, cut by its edges on
every side and wholly in the padding, dilated columns (one run a tap), groups of four output
channels and 1 to 3 left over, strides, batches, per-channel and per-tensor weights, input zero
points at both ends of int8 (the offset in [-127, 128]); and that the memory ladder puts it
below the byte windows, in place of the reference kernel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower import fields, lower
from mcugen.codegen.lower.opt_conv_2d import channel_records
from mcugen.kernel_choice import ladder
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from support import (
    SAME,
    SLOW,
    VALID,
    Conv,
    Dw,
    assert_variant_exact,
    conv_int8,
    dw_int8,
    window_convs,
    window_depthwise,
    window_out_hw,
    without_variants,
)

LEAN = "conv_2d_s8_lean"
#: the variants registered before it that take its layers
AHEAD = frozenset({"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_s8_col2", "conv_2d_s8_col"})

#: filters, strides and dilations drawn (KWS's 10x4 among them), input channels 1 to 16
KERNELS = [(3, 3), (1, 1), (2, 2), (3, 1), (10, 4), (5, 3), (1, 5)]
DILATIONS = [(1, 1), (1, 1), (2, 2), (1, 2), (3, 1)]
IN_C = st.sampled_from([1, 2, 3, 4, 5, 8, 16])
CONVS = window_convs(KERNELS, [(1, 1), (2, 2), (2, 1)], DILATIONS, 5, IN_C, 11, [0.16, 0.5, 4.0])


@SLOW
@given(conv=CONVS, seed=st.integers(0, 1000))
def test_lean_shape_classes(conv: Conv, seed: int) -> None:
    with without_variants(AHEAD):
        assert_variant_exact(conv_int8(conv, seed), LEAN)


FIXED = {
    "kws_first_layer": Conv(in_hwc=(21, 10, 1), out_c=12, kernel=(10, 4), stride=(2, 2), act=1),
    "ic_stem_3ch": Conv(in_hwc=(9, 9, 3), out_c=7, act=3),
    "vww_stem_3ch_s2": Conv(in_hwc=(10, 9, 3), out_c=8, stride=(2, 2), act=3),
    "in_c_2_odd_width": Conv(in_hwc=(7, 6, 2), out_c=5, kernel=(3, 5)),
    "in_c_4_words": Conv(in_hwc=(6, 7, 4), out_c=4, kernel=(3, 3), stride=(2, 1)),
    "in_c_8_dilated": Conv(in_hwc=(8, 9, 8), out_c=5, dilation=(2, 2), act=1),
    "in_c_16_3x3": Conv(in_hwc=(8, 8, 16), out_c=16, act=1),
    "in_c_16_5x3_valid": Conv(in_hwc=(9, 6, 16), out_c=8, kernel=(5, 3), padding=VALID),
    "windows_in_the_padding": Conv(in_hwc=(2, 2, 3), out_c=6, kernel=(3, 3), dilation=(3, 3)),
    "shift_0": Conv(in_hwc=(6, 5, 4), out_c=4, out_scale=0.0004, weight_max=2),
    "full_accumulators": Conv(in_hwc=(7, 7, 64), out_c=2, weight_max=127, out_scale=40.0),
}


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_shapes(name: str) -> None:
    with without_variants(AHEAD):
        assert_variant_exact(conv_int8(FIXED[name], seed=len(name)), LEAN, samples=2)


def test_batches_and_per_tensor_weights() -> None:
    conv = Conv(in_hwc=(5, 5, 3), out_c=9, kernel=(3, 3), stride=(2, 1), batch=2, act=1)
    per_tensor = Conv(in_hwc=(6, 5, 4), out_c=6, kernel=(2, 2), per_channel=False, bias=False)
    with without_variants(AHEAD):
        assert_variant_exact(conv_int8(conv, seed=5), LEAN, samples=2)
        assert_variant_exact(conv_int8(per_tensor, seed=6), LEAN, samples=2)


def offset_model(zero_point: int, in_c: int) -> bytes:
    """A 3x3 SAME convolution whose input zero point is `zero_point` (the offset -zero_point
    added to each input in the kernel's 16-bit lanes)."""
    rng = np.random.default_rng(zero_point & 0xFF)
    b = GraphBuilder()
    hwc = (6, 7, in_c)
    x = b.input((1, *hwc), "int8", scale=0.05, zero_point=zero_point)
    scales = rng.uniform(0.002, 0.01, 6)
    w = b.const(rng.integers(-127, 128, (6, 3, 3, in_c), dtype=np.int8), scale=scales, axis=0)
    bias = b.const(rng.integers(-3000, 3000, 6, dtype=np.int32), scale=0.05 * scales)
    hw = window_out_hw(hwc, (3, 3), (1, 1), (1, 1), SAME)
    y = b.activation((1, *hw, 6), "int8", scale=0.3, zero_point=5)
    b.op("CONV_2D", [x, w, bias], [y], padding=SAME, stride_h=1, stride_w=1)
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("zero_point", [-128, 127])
def test_input_zero_points_at_both_ends(zero_point: int) -> None:
    with without_variants(AHEAD):
        for in_c in (1, 4):
            assert_variant_exact(offset_model(zero_point, in_c), LEAN, samples=2)


def test_records_hold_the_layers_own_bias() -> None:
    """The lean records' bias is the layer's (the offset added per input), the fast kernels'
    has input_offset * (the filter row's sum) folded in."""
    gen = generate(import_model(offset_model(-20, 3), source="test model"))
    op = gen.graph.operators[0]
    ref = fields(lower(gen.graph, op).params)
    folded = channel_records(gen.graph, op, ref)
    own = channel_records(gen.graph, op, ref, folded=False)
    assert folded is not None and own is not None
    rows = gen.graph.tensors[op.inputs[1]].array().reshape(6, -1).astype(np.int64)
    bias = gen.graph.tensors[op.inputs[2]].array()
    assert [r[0] for r in own] == bias.tolist()
    assert [r[0] for r in folded] == (bias + 20 * rows.sum(axis=1)).tolist()
    assert [r[1:] for r in own] == [r[1:] for r in folded]


def test_ladder_ends_with_it_in_place_of_the_reference_kernel() -> None:
    """KWS's first layer's shape: conv_2d_s8, col2, col, then the lean rung (no scratch: the
    reference kernel, as little scratch and the same sharing, leaves the ladder)."""
    conv = Conv(in_hwc=(49, 10, 1), out_c=64, kernel=(10, 4), stride=(2, 2))
    gen = generate(import_model(conv_int8(conv), source="test model"))
    op = next(o.index for o in gen.graph.operators if o.opcode == "CONV_2D")
    rungs = ladder(gen.graph, op, gen.lowered[op], "cortex-m4")
    names = [r.variant for r in rungs]
    assert names == ["conv_2d_s8", "conv_2d_s8_col2", "conv_2d_s8_col", LEAN], names
    assert rungs[-1].scratch_bytes == 0 and rungs[-1].constants == ()


DW_LEAN = "depthwise_as_conv_s8_lean"
#: the variants registered before it that take a depthwise layer of one input channel
DW_AHEAD = frozenset({"conv_2d_stem_s8", "depthwise_as_conv_s8"})


@SLOW
@given(
    case=window_depthwise(
        [(3, 3), (10, 8), (1, 3), (5, 5), (2, 4), (1, 1)],
        [(1, 1), (2, 2), (2, 1)],
        [(1, 1), (2, 1)],
        channels=(1, 1),
        mult=(2, 9),
        batch=(1, 2),
        biases=("const", "absent"),
    ),
    seed=st.integers(0, 1000),
)
def test_one_input_channel_depthwise_runs_lean(case: Dw, seed: int) -> None:
    """A depthwise layer of one input channel (micro_speech's 10x8 of 8 outputs) on the lean
    kernel over the filter's columns stored as its rows: equal to the reference kernel and TFLM."""
    with without_variants(DW_AHEAD):
        assert_variant_exact(dw_int8(case, seed), DW_LEAN)


def test_depthwise_ladder_reaches_no_scratch_and_auto_takes_it() -> None:
    """micro_speech's layer: depthwise_as_conv_s8 (400 bytes of scratch) then the lean rung
    (none, a relaid filter); auto takes the lean rung, which costs no more instructions
    (kernel_costs: 2.62 a MAC against 2.66), so the arena is the reference kernels' one."""
    case = Dw(in_hwc=(49, 40, 1), mult=8, kernel=(10, 8), stride=(2, 2))
    gen = generate(import_model(dw_int8(case), source="test model"))
    op = next(o.index for o in gen.graph.operators if o.opcode == "DEPTHWISE_CONV_2D")
    assert gen.lowered[op].variant == DW_LEAN
    opt = generate(gen.graph, options=PlanOptions(kernels="opt"))
    fastest = opt.lowered[op]
    assert fastest.variant == "depthwise_as_conv_s8"
    assert gen.plan.arena_bytes < opt.plan.arena_bytes
    rungs = ladder(gen.graph, op, fastest, "cortex-m4")
    assert [r.variant for r in rungs] == ["depthwise_as_conv_s8", DW_LEAN]
    assert rungs[0].scratch_bytes == 400 and rungs[-1].scratch_bytes == 0
    assert rungs[-1].constants and len(rungs[-1].constants[0][1]) == 10 * 8 * 8
