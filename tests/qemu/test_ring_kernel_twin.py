"""The ring depthwise variant (mcugen/codegen/lower/opt_depthwise_ring.py) on the Cortex-M4, M7
and M55 twins, where its band fill and the planar path's lines run as assembly (SADD16, SMLAD,
SMMLAR), against TFLM bit for bit. The fast depthwise variants are removed from the registry for
the build, so every 3x3 depthwise layer runs the ring one: strides 1, 2 and mixed, SAME and
VALID, KWS's 25x5 shape (rows, several output lines a call, the band's last lines moved forward),
a tall image (columns), channel counts not multiples of 4, full-range activations (assembly) and
clamped ones (C), in place over a dying input and beside an input still alive."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import (
    FAST_DEPTHWISE,
    NEEDS_TWIN,
    RING,
    SAME,
    VALID,
    Chain,
    exact_on_twin,
    in_place_variants,
    ring_only,
)

pytestmark = NEEDS_TWIN


def ring_model(hw: tuple[int, int], channels: int, seed: int) -> bytes:
    chain = Chain((*hw, channels), seed, zero_point=9)
    chain.add()
    chain.depthwise((3, 3))  # over the dying sum: in place
    kept = chain.x
    chain.depthwise((3, 3), act=1)  # beside `kept`, clamped: the C lines
    chain.add(kept)
    chain.depthwise((3, 3))
    chain.depthwise((3, 3), (2, 1), SAME)
    chain.depthwise((3, 3), (1, 2), VALID)
    chain.depthwise((3, 3), (2, 2), SAME)
    return chain.tflite()


@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi", "mps3-an547"])
@pytest.mark.parametrize("hw, channels", [((25, 5), 10), ((30, 14), 5)])
def test_ring_kernel_bit_exact_on_dsp_twins(
    board: str, hw: tuple[int, int], channels: int, workdir: Path
) -> None:
    model = ring_model(hw, channels, seed=channels)
    target = resolve_target(load_board(board), emulate=True)
    with ring_only():
        gen = generate(import_model(model, source=f"ring{channels}"))
    variants = [low.variant for low in gen.lowered.values()]
    assert variants.count(RING) == 6 and not FAST_DEPTHWISE & set(variants), variants
    assert 0 < in_place_variants(gen).count(RING) < 6, "in place and not"
    exact_on_twin(gen, model, target, workdir / f"ring{channels}-{board}")
