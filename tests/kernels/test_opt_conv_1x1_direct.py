"""The 1x1 CONV_2D's rungs for memory that read their pixels as int8 (mcugen/codegen/lower/
opt_direct.py): conv_2d_1x1_s8_staged (runtime_c/kernels/opt/conv_2d_1x1_s8_staged.c: two pixels
staged, the stream path's parameters) and conv_2d_1x1_s8_direct (conv_2d_1x1_s8_direct.c: a pixel
at a time read as it is). Speed first never picks them (conv_2d_1x1_s8 takes their layers first),
so each test removes the kernels ahead of the one it tests from the registry (`only`), checks that
it was selected, then that its outputs equal the reference kernel's and TFLM's bit for bit:
channel counts with groups of four and channels left over, depths not multiples of 4 (direct's
single-row fallback), odd numbers of pixels (staged's last pixel with itself), per-tensor and
per-channel weights, in place (staged pixels, forwards and backwards); and that the memory ladder
puts them right below conv_2d_1x1_s8, taking the short requantisation's layers only (clamped
ones stay lean)."""

from __future__ import annotations

from contextlib import AbstractContextManager

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mcugen.kernel_choice import ladder
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import SLOW, VALID, assert_variant_exact, runs_in_place, without_variants

DIRECT = "conv_2d_1x1_s8_direct"
STAGED = "conv_2d_1x1_s8_staged"
#: per rung, the variants registered before it that take its layers
AHEAD = {STAGED: {"conv_2d_1x1_s8"}, DIRECT: {"conv_2d_1x1_s8", STAGED}}


def only(rung: str) -> AbstractContextManager[None]:
    """The variant registry without the kernels `rung` follows on a ladder."""
    return without_variants(AHEAD[rung])


def chain(
    hw: tuple[int, int],
    channels: tuple[int, ...],
    seed: int,
    per_channel: bool = True,
    act: int = 0,
) -> bytes:
    """x -> 1x1 convolutions through `channels` (channels[0] the input's): each may run in place
    over the one before (more or fewer outputs than inputs); activation `act` (0, none: int8's
    whole range, the short requantisation)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, *hw, channels[0]), "int8", scale=0.05, zero_point=int(rng.integers(-128, 128)))
    for prev_c, c in zip(channels, channels[1:], strict=False):
        scales = rng.uniform(0.002, 0.02, c) if per_channel else 0.01
        w = b.const(rng.integers(-127, 128, (c, 1, 1, prev_c), dtype=np.int8), scale=scales, axis=0)
        bias = b.const(
            rng.integers(-3000, 3000, c, dtype=np.int32), scale=0.05 * np.atleast_1d(scales)
        )
        y = b.activation((1, *hw, c), "int8", scale=0.3, zero_point=int(rng.integers(-128, 100)))
        options = {"padding": VALID, "stride_h": 1, "stride_w": 1, "fused_activation_function": act}
        b.op("CONV_2D", [x, w, bias], [y], **options)
        x = y
    b.output(x)
    return b.tflite()


@SLOW
@given(
    hw=st.tuples(st.integers(1, 5), st.integers(1, 5)),
    channels=st.lists(st.integers(1, 21), min_size=3, max_size=3),
    per_channel=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_direct_shapes(
    hw: tuple[int, int], channels: list[int], per_channel: bool, seed: int
) -> None:
    with only(DIRECT):
        gen = assert_variant_exact(chain(hw, tuple(channels), seed, per_channel), DIRECT)
    assert all(low.scratch_bytes == 0 for low in gen.lowered.values())


@SLOW
@given(
    hw=st.tuples(st.integers(1, 5), st.integers(1, 5)),
    channels=st.tuples(
        st.sampled_from([4, 8, 12, 20]), st.sampled_from([4, 8, 16]), st.sampled_from([2, 6, 10])
    ),
    per_channel=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_staged_shapes(
    hw: tuple[int, int], channels: tuple[int, int, int], per_channel: bool, seed: int
) -> None:
    """Depths multiples of 4 and even channel counts (its shapes), so both layers take it; the
    last layer's channel counts not multiples of 4."""
    with only(STAGED):
        gen = assert_variant_exact(chain(hw, channels, seed, per_channel), STAGED)
    layers = [low for low in gen.lowered.values() if low.variant == STAGED]
    assert [low.scratch_bytes for low in layers] == [2 * channels[0], 2 * channels[1]]


def test_in_place_and_groups() -> None:
    """Depths multiples of 4 (direct's grouped path) with 0 to 3 channels left over, narrowing
    and widening in place, odd and even pixel counts (staged from the front and from the back)."""
    for rung, hw, channels in (
        (DIRECT, (3, 5), (8, 16, 12)),
        (DIRECT, (4, 3), (12, 8, 20)),
        (DIRECT, (2, 2), (16, 13, 7)),
        (STAGED, (3, 5), (8, 16, 12)),
        (STAGED, (3, 3), (12, 8, 20)),
        (STAGED, (2, 2), (16, 12, 6)),
    ):
        with only(rung):
            gen = assert_variant_exact(chain(hw, channels, seed=sum(channels)), rung)
        assert runs_in_place(gen, 1), (rung, hw, channels)


def test_rungs_on_the_ladder() -> None:
    """Below conv_2d_1x1_s8 (its widened pair: 4 bytes an input channel), staged (2) then direct
    (none), the lean variant dropped (no less scratch); an odd channel count keeps staged off, a
    clamped activation (the long requantisation) both."""
    gen = generate(import_model(chain((3, 5), (8, 12, 8), seed=1), source="ladder"))
    rungs = ladder(gen.graph, 1, gen.lowered[1], "cortex-m4")
    assert [r.variant for r in rungs] == ["conv_2d_1x1_s8", STAGED, DIRECT]
    assert [r.scratch_bytes for r in rungs] == [48, 24, 0]
    gen = generate(import_model(chain((3, 5), (8, 12, 7), seed=1), source="ladder"))
    rungs = ladder(gen.graph, 1, gen.lowered[1], "cortex-m4")
    assert [r.variant for r in rungs] == ["conv_2d_1x1_s8", DIRECT]
    gen = generate(import_model(chain((3, 5), (8, 12, 8), seed=1, act=1), source="ladder"))
    rungs = ladder(gen.graph, 1, gen.lowered[1], "cortex-m4")
    assert [r.variant for r in rungs] == ["conv_2d_1x1_s8", "conv_2d_1x1_s8_lean"]
