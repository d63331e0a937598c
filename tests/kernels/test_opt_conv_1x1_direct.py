"""The 1x1 CONV_2D's rung for memory that reads its pixels as they are (runtime_c/kernels/opt/
conv_2d_1x1_s8_direct.c, mcugen/codegen/lower/opt_mat_mult.py conv_2d_1x1_s8_direct). Speed first
never picks it (conv_2d_1x1_s8 takes its layers first), so each test removes that from the
registry (`direct_only`), checks that it was selected, then that its outputs equal the reference
kernel's and TFLM's bit for bit: channel counts with groups of four and channels left over, depths
not multiples of 4 (its single-row fallback), per-tensor and per-channel weights, in place (its
staged pixels, forwards and backwards); and that the memory ladder puts it right below
conv_2d_1x1_s8, taking the short requantisation's layers only (clamped ones stay lean)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower import _variants
from mcugen.kernel_choice import ladder
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import Generated, generate
from support import SLOW, VALID, assert_variant_exact

DIRECT = "conv_2d_1x1_s8_direct"


@contextmanager
def direct_only() -> Iterator[None]:
    """The variant registry without conv_2d_1x1_s8, the kernel the direct one follows."""
    saved = list(_variants.VARIANTS)
    _variants.VARIANTS[:] = [v for v in saved if v.name != "conv_2d_1x1_s8"]
    try:
        yield
    finally:
        _variants.VARIANTS[:] = saved


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


def in_place(gen: Generated, op: int) -> bool:
    offsets = gen.plan.tensor_offsets()
    o = gen.graph.operators[op]
    return offsets.get(o.inputs[0]) == offsets.get(o.outputs[0]) is not None


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
    with direct_only():
        gen = assert_variant_exact(chain(hw, tuple(channels), seed, per_channel), DIRECT)
    assert all(low.scratch_bytes == 0 for low in gen.lowered.values())


def test_direct_in_place_and_groups() -> None:
    """Depths multiples of 4 (the grouped path) with 0 to 3 channels left over, narrowing and
    widening in place."""
    for hw, channels in (((3, 5), (8, 16, 12)), ((4, 3), (12, 8, 20)), ((2, 2), (16, 13, 7))):
        with direct_only():
            gen = assert_variant_exact(chain(hw, channels, seed=sum(channels)), DIRECT)
        assert in_place(gen, 1), (hw, channels)


def test_direct_on_the_ladder() -> None:
    """Below conv_2d_1x1_s8 (no scratch against its widened pair), the lean variant dropped (no
    less scratch); a clamped activation (the long requantisation) keeps the lean variant."""
    gen = generate(import_model(chain((3, 5), (8, 12, 8), seed=1), source="ladder"))
    rungs = ladder(gen.graph, 1, gen.lowered[1], "cortex-m4")
    assert [r.variant for r in rungs] == ["conv_2d_1x1_s8", DIRECT]
    assert rungs[1].scratch_bytes == 0 < rungs[0].scratch_bytes
    gen = generate(import_model(chain((3, 5), (8, 12, 8), seed=1, act=1), source="ladder"))
    rungs = ladder(gen.graph, 1, gen.lowered[1], "cortex-m4")
    assert [r.variant for r in rungs] == ["conv_2d_1x1_s8", "conv_2d_1x1_s8_lean"]
