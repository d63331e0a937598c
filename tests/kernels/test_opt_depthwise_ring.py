"""The ring variant (mcugen/codegen/lower/opt_depthwise_ring.py: depthwise_conv_2d_s8_ring)
against the reference kernel and TFLM on random shapes. Speed first never picks it where the fast
variant takes the layer, so each test removes the fast variants from the registry (`ring_only`),
checks that the ring variant was selected, then that its outputs equal the reference kernel's and
TFLM's bit for bit: 3x3 at strides 1 and 2 (and mixed), SAME and VALID, odd widths and heights,
tall and wide images (lines along columns and rows, one output line a call and several, a ring
that wraps and one that holds the whole image), channel counts not multiples of 4, batches,
activations, per-tensor and per-channel weights, and in place over a dying input."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower import fields
from mcugen.codegen.lower.opt_depthwise_ring import ring_layout
from mcugen.kernel_choice import ladder
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from support import (
    FAST_DEPTHWISE,
    RING,
    SAME,
    SLOW,
    Dw,
    assert_variant_exact,
    dw_after_add,
    dw_int8,
    ring_only,
    runs_in_place,
    window_depthwise,
)
from testgraphs import benchmark_suite


@SLOW
@given(
    case=window_depthwise(
        [(3, 3)],
        [(1, 1), (2, 2), (1, 2), (2, 1)],
        hw=(27, 11),
        channels=(1, 11),
        acts=(0, 0, 1, 3),
    ),
    seed=st.integers(0, 1000),
)
def test_depthwise_ring(case: Dw, seed: int) -> None:
    with ring_only():
        assert_variant_exact(dw_int8(case, seed), RING)


#: (image, channels, stride, whether one output line's ring fits the channel plane): tall
#: (columns), wide and square (rows), a ring of one output line and of several, one that wraps and
#: one that holds the image, odd channel counts; small images, whose ring of three lines is larger
#: than their plane (then the lean rung keeps the reference's arena)
IN_PLACE = (
    ((25, 5), 6, 1, True),  # KWS's shape: rows, three output lines a call
    ((30, 14), 5, 1, True),  # tall and wide enough for columns within the plane
    ((9, 31), 3, 2, True),
    ((12, 4), 7, 1, True),
    ((7, 6), 10, 1, False),
    ((8, 9), 8, 2, True),
    ((3, 3), 9, 1, False),
)


def test_depthwise_ring_in_place() -> None:
    layouts = set()
    for hw, channels, stride, fits in IN_PLACE:
        with ring_only():
            gen = assert_variant_exact(dw_after_add(hw, channels, stride, zp=7), RING)
        assert runs_in_place(gen, 1), (hw, channels, stride)
        low = gen.lowered[1]
        layout = ring_layout(fields(low.params), hw, _out_hw(gen))
        assert low.scratch_bytes == layout.scratch_bytes
        assert (low.scratch_bytes <= hw[0] * hw[1]) == fits, (hw, low.scratch_bytes)
        layouts.add(layout.columns)
    assert layouts == {False, True}, "both line axes in place"


def _out_hw(gen: Generated) -> tuple[int, int]:
    shape = gen.graph.tensors[gen.graph.operators[1].outputs[0]].shape
    return shape[1], shape[2]


def test_ring_rung_on_the_ladder() -> None:
    """Speed first keeps the fast variant; the ladder of kernels chosen for memory has the ring
    variant below it, with less scratch than the fast one and at most a channel plane, and the
    lean one below it."""
    for hw, channels, stride, fits in IN_PLACE:
        gen = generate(import_model(dw_after_add(hw, channels, stride, zp=7), source="ladder"))
        fastest = gen.lowered[1]
        assert fastest.variant in FAST_DEPTHWISE
        rungs = ladder(gen.graph, 1, fastest, "cortex-m4")
        names = [r.variant for r in rungs]
        assert RING in names and names[-1] == "depthwise_conv_2d_s8_lean", names
        ring = rungs[names.index(RING)]
        assert 0 < ring.scratch_bytes < fastest.scratch_bytes
        assert (ring.scratch_bytes <= hw[0] * hw[1]) == fits


def test_ring_layout_chunks() -> None:
    """The scratch is the largest chunk of output lines within one channel plane: KWS's 25x5
    layers (3x3 SAME stride 1) take rows, five output lines a call (7 rows of 8 int16: 112 bytes,
    within the 125-byte plane; a column of 25 would take 3 lines of 28 entries, 168 bytes)."""
    ref = {"pad_h": 1, "pad_w": 1, "stride_h": 1, "stride_w": 1}
    kws = ring_layout(ref, (25, 5), (25, 5))
    assert (kws.columns, kws.chunk, kws.scratch_bytes) == (False, 5, 112)
    tall = ring_layout(ref, (40, 12), (40, 12))
    assert tall.columns and tall.scratch_bytes <= 480
    tiny = ring_layout(ref, (2, 2), (2, 2))
    assert tiny.chunk == 1 and tiny.scratch_bytes > 4  # over the plane: the lean rung is below


def widened_then_depthwise(hw: tuple[int, int], channels: int) -> bytes:
    """One channel widened by a 1x1 convolution, then a 3x3 depthwise over it (in place: the
    widened tensor dies there), as KWS's layers at its peak."""
    rng = np.random.default_rng(channels)
    b = GraphBuilder()
    x = b.input((1, *hw, 1), "int8", scale=0.05, zero_point=3)
    scales = rng.uniform(0.002, 0.02, channels)
    w = b.const(rng.integers(-127, 128, (channels, 1, 1, 1), dtype=np.int8), scale=scales, axis=0)
    h = b.activation((1, *hw, channels), "int8", scale=0.1, zero_point=-5)
    b.op("CONV_2D", [x, w], [h], padding=SAME, stride_h=1, stride_w=1)
    dw = b.const(rng.integers(-127, 128, (1, 3, 3, channels), dtype=np.int8), scale=scales, axis=3)
    y = b.activation((1, *hw, channels), "int8", scale=0.2, zero_point=4)
    b.op(
        "DEPTHWISE_CONV_2D", [h, dw], [y], padding=SAME, stride_h=1, stride_w=1, depth_multiplier=1
    )
    b.output(y)
    return b.tflite()


def test_kernels_for_memory_take_the_ring() -> None:
    """`--kernels memory` on a KWS-like layer at the peak (25x5x64 in place, the fast kernels'
    scratch over the reference's plane of staging) takes the ring kernel and plans no more than
    the reference kernels; on randwire_er24 the layers the rounds left on the lean kernel go one
    rung up to the ring (kernel_choice `_stepped_up`), at the same bound."""
    model = import_model(widened_then_depthwise((25, 5), 64), source="kws-like")
    memory = generate(model, options=PlanOptions(kernels="memory", core="cortex-m4"))
    reference = generate(model, options=PlanOptions(kernels="reference", core="cortex-m4"))
    fastest = generate(model, options=PlanOptions(kernels="opt", core="cortex-m4"))
    assert memory.lowered[1].variant == RING
    assert runs_in_place(memory, 1)
    assert memory.plan.arena_bytes <= reference.plan.arena_bytes < fastest.plan.arena_bytes
    graph = dict(benchmark_suite())["randwire_er24"]
    gen = generate(graph(), options=PlanOptions(kernels="memory", core="cortex-m7"))
    choice = gen.plan.kernel_choice
    assert choice is not None and choice.bound < choice.fastest_arena
    depthwise = [s.chosen for s in choice.swaps if s.opcode == "DEPTHWISE_CONV_2D"]
    assert depthwise and set(depthwise) == {RING}, depthwise
    assert gen.plan.arena_bytes <= choice.bound
