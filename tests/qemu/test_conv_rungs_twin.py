"""The convolutions' rungs for memory on the Cortex-M7 and M4 twins, where their assembly runs,
against TFLM bit for bit: conv_2d_s8_col2 and conv_2d_s8_col (two and one windows of bytes,
runtime_c/kernels/opt/conv_2d_s8_col2.c, conv_2d_s8_col.c), conv_2d_1x1_s8_staged (two pixels
staged as bytes) and conv_2d_1x1_s8_direct (pixels read as they are). The kernels they follow are
removed from the registry for the build, so every convolution runs one of them: KWS's first
layer's 10x4 filter over one channel (depth 40: whole blocks, an odd count), 3x3 and 5x3 filters
over 5 and 3 channels (tails of 1 and 3), strided, dilated, SAME and VALID, groups of four output
channels with 0 to 3 left over; 1x1 layers widening and narrowing, in place (staged pixels) and
beside a live input, with depths multiples of 4 and not, odd and even channel counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import (
    DIRECT_RUNGS,
    NEEDS_TWIN,
    VALID,
    Chain,
    exact_on_twin,
    in_place_variants,
    without_variants,
)

pytestmark = NEEDS_TWIN

#: per general rung: the rungs the build runs, and the kernels removed for it
RUNGS = {
    "conv_2d_s8_col2": {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_1x1_s8"},
    "conv_2d_s8_col": {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_1x1_s8", "conv_2d_s8_col2"},
}


def rungs_model(seed: int) -> bytes:
    chain = Chain((21, 10, 1), seed, zero_point=-7, out_scale=0.2)
    chain.conv(12, (10, 4), (2, 2), act=1)  # KWS's first layer
    chain.conv(16)  # 1x1, depth 12
    chain.conv(13)  # in place, narrowing; 3 groups and 1 left over
    chain.conv(5, (3, 3), dil=2)  # col, depth 117 (a tail of 1), 1 group and 1 left over
    chain.conv(8)  # depth 5: the single-row fallback
    chain.conv(22)  # in place, widening; 2 left over
    chain.conv(3, (5, 3), (2, 1), VALID, act=3)  # col, a pair of channels and one
    return chain.tflite()


@pytest.mark.parametrize("general", sorted(RUNGS))
@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi"])
def test_conv_rungs_bit_exact_on_dsp_twins(board: str, general: str, workdir: Path) -> None:
    model = rungs_model(seed=3)
    target = resolve_target(load_board(board), emulate=True)
    with without_variants(RUNGS[general]):
        gen = generate(import_model(model, source="rungs"))
    chosen = [low.variant for low in gen.lowered.values()]
    assert set(chosen) == {general, *DIRECT_RUNGS}, chosen
    assert DIRECT_RUNGS <= set(in_place_variants(gen)), "staged pixels"
    exact_on_twin(gen, model, target, workdir / f"{general}-{board}")
