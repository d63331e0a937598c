"""The convolutions' rungs for memory on the Cortex-M7 and M4 twins, where their assembly runs,
against TFLM bit for bit: conv_2d_s8_col2 and conv_2d_s8_col (two and one windows of bytes,
runtime_c/kernels/opt/conv_2d_s8_col2.c, conv_2d_s8_col.c), conv_2d_1x1_s8_staged (two pixels
staged as bytes) and conv_2d_1x1_s8_direct (pixels read as they are). The kernels they follow are
removed from the registry for the build, so every convolution runs one of them: KWS's first
layer's 10x4 filter over one channel (depth 40: whole blocks, an odd count), 3x3 and 5x3 filters
over 5 and 3 channels (tails of 1 and 3), strided, dilated, SAME and VALID, groups of four output
channels with 0 to 3 left over; 1x1 layers widening and narrowing, in place (staged pixels) and
beside a live input, with depths multiples of 4 and not, odd and even channel counts; and
conv_2d_s8_lean (no scratch) over the same model and over stems, dilated and VALID windows."""

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

#: the rung with no scratch (runtime_c/kernels/opt/conv_2d_s8_lean.c), below the byte windows
LEAN = "conv_2d_s8_lean"
#: per general rung: the kernels removed for its build (those above it, and the lean rung that
#: the default's cheap memory choice could pick below it)
RUNGS = {
    "conv_2d_s8_col2": {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_1x1_s8", LEAN},
    "conv_2d_s8_col": {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_1x1_s8", "conv_2d_s8_col2", LEAN},
}
ABOVE_LEAN = {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_s8_col2", "conv_2d_s8_col"}


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


def lean_shapes_model(seed: int) -> bytes:
    """The lean rung's other shape classes: 3, 8, 6 and 5 input channels, strided, dilated,
    VALID, a strided 1x1."""
    chain = Chain((13, 11, 3), seed, zero_point=-7, out_scale=0.2)
    chain.conv(8, (3, 3), (2, 2), act=1)  # a stem: runs of 9 bytes, 2 words and 1 byte
    chain.conv(6, (3, 3), dil=2)  # in_c 8, dilated: a run a tap, 2 words
    chain.conv(5, (2, 5), (1, 2), VALID, act=3)  # in_c 6: a word and 2 bytes a tap
    chain.conv(7, (1, 1), (2, 2))  # a strided 1x1, depth 5
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


@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi"])
@pytest.mark.parametrize("lean_shapes", [False, True])
def test_lean_rung_bit_exact_on_dsp_twins(board: str, lean_shapes: bool, workdir: Path) -> None:
    """conv_2d_s8_lean's assembly runs every general convolution of both models (KWS's first
    layer: runs of one word, three bytes at the edges; the other: stems, dilated, VALID)."""
    model = lean_shapes_model(seed=4) if lean_shapes else rungs_model(seed=4)
    target = resolve_target(load_board(board), emulate=True)
    with without_variants(ABOVE_LEAN):
        gen = generate(import_model(model, source="lean"))
    general = [
        gen.lowered[o.index].variant
        for o in gen.graph.operators
        if o.opcode == "CONV_2D" and gen.graph.tensors[o.inputs[1]].shape[1:3] != (1, 1)
    ]
    assert general and set(general) == {LEAN}, general
    exact_on_twin(gen, model, target, workdir / f"lean-{lean_shapes}-{board}")
