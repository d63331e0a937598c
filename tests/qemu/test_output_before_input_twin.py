"""Output before its input (plan/aliasing.py step 7) on the Cortex-M7 and M4 twins, where the
convolution rungs run their DSP assembly: a stride-2 stem over the image, im2col and lean
convolutions, and lean depthwise layers each write their output from `input_after` bytes before
their dying input, bit-exact with TFLM."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcugen.plan.aliasing as aliasing
from mcugen.boards import load_board, resolve_target
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import NEEDS_TWIN, SAME, VALID, Chain, exact_on_twin, without_variants

pytestmark = NEEDS_TWIN


def strided_model(seed: int) -> bytes:
    chain = Chain((24, 20, 3), seed, zero_point=-7)
    chain.conv(8, (3, 3), (2, 2), SAME, act=1)  # the stem, over the image
    chain.conv(12, (3, 3), (1, 1), SAME)
    chain.conv(16, (3, 3), (2, 2), VALID)
    chain.depthwise((3, 3), (2, 2), SAME)
    chain.conv(20, (2, 2), (1, 1), VALID)
    return chain.dense(10)


def overlapped(gen: object) -> list[str]:
    """The variants of the operators whose input lies inside their output, after its start."""
    offsets = gen.plan.tensor_offsets()  # type: ignore[attr-defined]
    found = []
    for i, low in gen.lowered.items():  # type: ignore[attr-defined]
        o = gen.graph.operators[i]  # type: ignore[attr-defined]
        x, y = offsets.get(o.inputs[0], -1), offsets.get(o.outputs[0], -1)
        if 0 <= y < x < y + gen.graph.tensors[o.outputs[0]].nbytes:  # type: ignore[attr-defined]
            found.append(low.variant)
    return found


#: variants removed from the registry -> the one that then runs the 3x3 layers over their inputs
RUNGS = {
    "fastest": (set(), "conv_2d_s8"),
    "col2": ({"conv_2d_stem_s8", "conv_2d_s8"}, "conv_2d_s8_col2"),
    "lean": (
        {"conv_2d_stem_s8", "conv_2d_s8", "conv_2d_s8_col2", "conv_2d_s8_col"},
        "conv_2d_s8_lean",
    ),
}


@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi"])
@pytest.mark.parametrize("rung", sorted(RUNGS))
def test_strided_layers_over_their_inputs_bit_exact(board: str, rung: str, workdir: Path) -> None:
    model = strided_model(seed=5)
    target = resolve_target(load_board(board), emulate=True)
    removed, runs = RUNGS[rung]
    with without_variants(removed), pytest.MonkeyPatch.context() as patch:
        patch.setattr(aliasing, "no_worse", lambda *args, **kwargs: True)  # every sharing
        gen = generate(import_model(model, source="strided"))
    shared = overlapped(gen)
    assert shared.count(runs) >= 2 and (rung != "fastest" or "conv_2d_stem_s8" in shared), shared
    exact_on_twin(gen, model, target, workdir / f"strided-{rung}-{board}")
