"""The optimised kernels' DSP paths (SMLAD, SXTAB16, SMMULR and the depthwise window's inline
assembly run only on a core with the DSP extension; the host tests run their C fallbacks) on the
Cortex-M7, M4 and M55 twins, against TFLM bit for bit. One chain per model holds every variant
in odd shapes: depthwise 3x3, 5x5 and 2x4 at strides 1 and 2 with SAME and VALID padding (windows
crossing every border, some running in place over a dying input), channel counts that are not
multiples of 4, a 1x1 convolution, a general convolution, an ADD and a fully connected layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import NEEDS_TWIN, SAME, VALID, Chain, exact_on_twin

pytestmark = NEEDS_TWIN

VARIANTS = {
    "depthwise_conv_2d_s8",
    "conv_2d_1x1_s8",
    "conv_2d_s8",
    "add_s8",
    "fully_connected_s8",
}


def chain_model(channels: int, seed: int) -> bytes:
    m = Chain((11, 9, channels), seed, zero_point=9)
    m.depthwise((3, 3), (1, 1), SAME, act=1)
    m.depthwise((2, 4), (1, 2), SAME, act=0)
    m.conv(channels + 3, act=1)
    m.depthwise((3, 3), (2, 2), SAME, act=3)
    m.depthwise((5, 5), (1, 1), SAME, act=1)
    m.depthwise((3, 3), (1, 1), VALID, act=0)
    m.conv(6, (3, 3), act=1)
    m.add()
    return m.dense(10)


def stem_models() -> dict[str, bytes]:
    """conv_2d_stem_s8's paths: the assembly of three channels (a 3x3 window of 15 words) and of
    one (a depthwise layer of one input channel, 6 words), both at the full int8 range over
    strips of 8 pixels and a short last one; the C path of a clamped activation, 5 output
    channels and a 3x5 filter."""
    three = Chain((15, 21, 3), seed=1, zero_point=9)
    three.conv(8, (3, 3), (2, 2), act=0)
    three.conv(6, (3, 3), act=1)
    one = Chain((17, 22, 1), seed=2, zero_point=9)
    one.depthwise((3, 3), (2, 2), SAME, act=0, mult=8)
    clamped = Chain((9, 13, 3), seed=3, zero_point=9)
    clamped.conv(5, (3, 5), (1, 2), act=3)
    return {"three": three.dense(10), "one": one.dense(10), "clamped": clamped.dense(10)}


@pytest.mark.parametrize("board", ["nucleo-f767", "mps2-an386", "mps3-an547"])
@pytest.mark.parametrize("channels", [8, 10, 5])
def test_opt_kernels_bit_exact_on_dsp_twins(board: str, channels: int, workdir: Path) -> None:
    model = chain_model(channels, seed=channels)
    gen = generate(import_model(model, source=f"chain{channels}"))
    assert VARIANTS <= {low.variant for low in gen.lowered.values()}
    target = resolve_target(load_board(board), emulate=True)
    exact_on_twin(gen, model, target, workdir / f"chain{channels}-{board}")


@pytest.mark.parametrize("board", ["nucleo-f767", "mps2-an386", "mps3-an547"])
def test_stem_kernel_bit_exact_on_dsp_twins(board: str, workdir: Path) -> None:
    target = resolve_target(load_board(board), emulate=True)
    for name, model in stem_models().items():
        gen = generate(import_model(model, source=f"stem-{name}"))
        assert "conv_2d_stem_s8" in {low.variant for low in gen.lowered.values()}, name
        exact_on_twin(gen, model, target, workdir / f"stem-{name}-{board}")
