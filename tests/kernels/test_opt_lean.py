"""The lean variants (mcugen/codegen/lower/opt_lean.py: depthwise_conv_2d_s8_lean,
conv_2d_1x1_s8_lean) against the reference kernel and TFLM on random shapes. Speed first never
picks them where a fast variant takes the layer, so each test removes the fast variants of the
opcode from the registry (`lean_only`), checks that the lean variant was selected, then that its
outputs equal the reference kernel's and TFLM's bit for bit: odd widths, channel counts not
multiples of 4, strides, SAME and VALID padding, dilation, batches, activations, per-tensor and
per-channel weights, and in place (the plan puts the output over a dying input, with the
reference kernel's staging as scratch)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcugen.kernel_choice import ladder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import (
    RING,
    SLOW,
    Dw,
    assert_variant_exact,
    dw_after_add,
    dw_int8,
    lean_only,
    pointwise,
    runs_in_place,
    window_depthwise,
)


@SLOW
@given(
    case=window_depthwise(
        [(3, 3), (3, 3), (1, 3), (5, 5), (2, 4), (1, 1)],
        [(1, 1), (2, 2), (1, 2), (2, 1)],
        [(1, 1), (1, 1), (2, 2), (1, 3)],
    ),
    seed=st.integers(0, 1000),
)
def test_depthwise_lean(case: Dw, seed: int) -> None:
    with lean_only():
        assert_variant_exact(dw_int8(case, seed), "depthwise_conv_2d_s8_lean")


def test_depthwise_lean_in_place() -> None:
    for hw, channels, stride in (((7, 6), 10, 1), ((8, 9), 8, 2), ((3, 3), 9, 1)):
        with lean_only():
            model = dw_after_add(hw, channels, stride, zp=7)
            gen = assert_variant_exact(model, "depthwise_conv_2d_s8_lean")
        assert runs_in_place(gen, 1), (hw, channels, stride)


@SLOW
@given(
    hw=st.tuples(st.integers(1, 5), st.integers(1, 5)),
    in_c=st.integers(1, 21),
    out_c=st.integers(1, 13),
    act=st.sampled_from([0, 0, 1, 3]),
    seed=st.integers(0, 1000),
)
def test_pointwise_lean(hw: tuple[int, int], in_c: int, out_c: int, act: int, seed: int) -> None:
    """Full-range activations take the short requantisation, clamped ones the long one; the
    second layer may run in place."""
    with lean_only(direct=True):
        gen = assert_variant_exact(
            pointwise(hw, in_c, out_c, seed, act=act, chain=True), "conv_2d_1x1_s8_lean"
        )
    assert all(low.scratch_bytes == 0 for low in gen.lowered.values())


def test_pointwise_lean_in_place() -> None:
    for hw, in_c, out_c in (((3, 5), 8, 5), ((4, 3), 6, 11), ((1, 1), 3, 3)):
        with lean_only(direct=True):
            gen = assert_variant_exact(
                pointwise(hw, in_c, out_c, 1, chain=True), "conv_2d_1x1_s8_lean"
            )
        assert runs_in_place(gen, 1), (hw, in_c, out_c)


def test_lean_rungs_on_the_ladder() -> None:
    """Speed first keeps the fast variants; the ladder of kernels chosen for memory has the lean
    variant last below each fast one (under the depthwise ring variant), and no reference rung
    under it (same scratch, same sharing); a clamped activation (the long requantisation), which
    conv_2d_1x1_s8_staged and conv_2d_1x1_s8_direct do not take."""
    for model, rungs_of in (
        (
            dw_after_add((7, 6), 10, 1, zp=7),
            ["depthwise_conv_2d_s8", RING, "depthwise_conv_2d_s8_lean"],
        ),
        (pointwise((3, 5), 8, 5, 1, act=1, chain=True), ["conv_2d_1x1_s8", "conv_2d_1x1_s8_lean"]),
    ):
        gen = generate(import_model(model, source="ladder"))
        op = 1
        fastest = gen.lowered[op]
        assert fastest.variant == rungs_of[0]
        rungs = ladder(gen.graph, op, fastest, "cortex-m7")
        assert [r.variant for r in rungs] == rungs_of
        scratch = [r.scratch_bytes for r in rungs]
        assert scratch == sorted(scratch, reverse=True) and len(set(scratch)) == len(scratch)
        assert scratch[-1] == 0
