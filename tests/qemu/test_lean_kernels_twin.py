"""The lean variants (mcugen/codegen/lower/opt_lean.py) on the Cortex-M7 and M4 twins, where
their DSP intrinsics (SXTAB16, SXTB16, SMLABB / SMLATT, the matrix product's single-row assembly)
run as instructions, against TFLM bit for bit. The fast variants they follow are removed from the
registry for the build, so every depthwise and 1x1 layer runs a lean one: depthwise 3x3, 5x5 and
2x4 at strides 1 and 2, SAME and VALID, dilation 2, channel counts not multiples of 4, some in
place over a dying input (their channel-plane path) and some beside an input still alive, and
1x1 convolutions widening and narrowing, in place too (their staged-pixel path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import (
    FAST_VARIANTS,
    NEEDS_TWIN,
    SAME,
    VALID,
    Chain,
    exact_on_twin,
    in_place_variants,
    lean_only,
)

pytestmark = NEEDS_TWIN

LEAN = {"depthwise_conv_2d_s8_lean", "conv_2d_1x1_s8_lean"}


def lean_model(channels: int, seed: int) -> bytes:
    chain = Chain((11, 9, channels), seed, zero_point=9)

    def dw(kernel: tuple[int, int], stride: tuple[int, int], padding: int, dil: int = 1) -> None:
        chain.depthwise(kernel, stride, padding, dil, act=int(chain.rng.integers(0, 2)))

    chain.add()
    kept = chain.x  # alive until the ADD after the depthwise: that one cannot run in place
    dw((3, 3), (1, 1), SAME)
    chain.add(kept)
    dw((2, 4), (1, 2), SAME)
    chain.conv(channels + 3)
    chain.conv(channels)
    kept = chain.x
    dw((5, 5), (1, 1), SAME)
    chain.add(kept)
    dw((3, 3), (2, 2), SAME)
    kept = chain.x
    dw((3, 3), (1, 1), SAME, dil=2)
    chain.add(kept)
    dw((3, 3), (1, 1), VALID)
    chain.add()
    chain.conv(channels + 5)
    return chain.tflite()


@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi"])
@pytest.mark.parametrize("channels", [8, 10, 5])
def test_lean_kernels_bit_exact_on_dsp_twins(board: str, channels: int, workdir: Path) -> None:
    model = lean_model(channels, seed=channels)
    target = resolve_target(load_board(board), emulate=True)
    with lean_only(direct=True):  # opt_direct.py's rungs would take the 1x1 layers first
        gen = generate(import_model(model, source=f"lean{channels}"))
    chosen = {low.variant for low in gen.lowered.values()}
    assert LEAN <= chosen and not FAST_VARIANTS & chosen, chosen
    shared = in_place_variants(gen)
    depthwise = [low.variant for low in gen.lowered.values()].count("depthwise_conv_2d_s8_lean")
    assert 0 < shared.count("depthwise_conv_2d_s8_lean") < depthwise, "both paths"
    assert "conv_2d_1x1_s8_lean" in shared
    exact_on_twin(gen, model, target, workdir / f"lean{channels}-{board}")


@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi"])
def test_one_channel_depthwise_lean_bit_exact_on_dsp_twins(board: str, workdir: Path) -> None:
    """micro_speech's layer shape (10x8 over one channel, 8 outputs, stride 2) and a 5x3 of 5
    outputs at stride 1: depthwise_as_conv_s8_lean (conv_2d_s8_lean's
    kernel over the filter's columns as its rows), which auto takes, equal to TFLM."""
    from support import Dw, dw_int8

    target = resolve_target(load_board(board), emulate=True)
    for case in (
        Dw(in_hwc=(25, 20, 1), mult=8, kernel=(10, 8), stride=(2, 2), act=1),
        Dw(in_hwc=(9, 7, 1), mult=5, kernel=(5, 3), stride=(1, 1), padding=VALID),
    ):
        model = dw_int8(case, seed=case.mult)
        gen = generate(import_model(model, source="dw1"))
        assert "depthwise_as_conv_s8_lean" in {low.variant for low in gen.lowered.values()}
        exact_on_twin(gen, model, target, workdir / f"dw1-{case.mult}-{board}")
