"""The widened matrix product's DSP paths (runtime_c/kernels/opt/mat_mult_s8.c: the 2x2 and 1x4
inline-assembly loops, entered at their second block for odd block counts, and the short
requantisation's SMMLAR and SSAT; the host tests run the C paths) on the Cortex-M4, M7 and M55
twins against TFLM bit for bit: one chain of 1x1 convolutions over an odd pixel count (depths of
1 to 20 blocks and one not a multiple of 4, some in place, pruned channels, a ReLU6 on the long
requantisation; the stream path's assembly, entered at 8 of its 16 blocks, where the channels
are even) and fully connected layers of batch 1 and 2."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import NEEDS_TWIN, SAME, exact_on_twin, window_options

pytestmark = NEEDS_TWIN


def chain_model(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    hw = (5, 3)
    x = b.input((1, *hw, 12), "int8", scale=0.05, zero_point=7)
    prev, prev_c = x, 12
    # (output channels, activation, pruned channels): depths 12, 8, 20, 4, 32, 28, 64, 80, 36, 7,
    # 16; the stream path (even channels, whole blocks) takes 3, 2, 5, 1, 8, 7, 16 (its whole
    # loop) and 20 blocks (entered at block 12 of 16, then once round)
    layers = [(8, 0, 0), (20, 0, 2), (4, 0, 0), (32, 0, 0), (28, 0, 1), (64, 0, 0), (80, 0, 0)]
    layers += [(36, 0, 0)]
    for out_c, act, pruned in (*layers, (7, 3, 0), (16, 0, 1), (9, 0, 0)):
        scales = rng.uniform(0.002, 0.02, out_c)
        weights = rng.integers(-127, 128, (out_c, 1, 1, prev_c), dtype=np.int8)
        bias = rng.integers(-3000, 3000, out_c).astype(np.int64)
        weights[:pruned] = 0
        bias[:pruned] = -(2**30) + 64
        w = b.const(weights, scale=scales, zero_point=0, axis=0)
        bq = b.const(bias.astype(np.int32), scale=0.05 * scales)
        zp = int(rng.integers(-20, 20))
        y = b.activation((1, *hw, out_c), "int8", scale=0.2, zero_point=zp)
        b.op("CONV_2D", [prev, w, bq], [y], **window_options(SAME, (1, 1), (1, 1), act))
        prev, prev_c = y, out_c
    flat = b.activation((1, 15 * prev_c), "int8", scale=0.2, zero_point=zp)
    b.op("RESHAPE", [prev, b.const(np.array([1, 15 * prev_c], dtype=np.int32))], [flat])
    # batch 1: depth 135 (C path), 12 (3 blocks) into 11 channels (two quads, a pair, one), 11
    # (C path), 8 (2 blocks) into 16; then batch 2
    h = flat
    for depth, units in ((15 * prev_c, 12), (12, 11), (11, 8), (8, 16)):
        w = b.const(rng.integers(-127, 128, (units, depth), dtype=np.int8), scale=0.004)
        y = b.activation((1, units), "int8", scale=0.3, zero_point=2)
        b.op("FULLY_CONNECTED", [h, w, -1], [y])
        h = y
    pair = b.activation((2, 8), "int8", scale=0.3, zero_point=2)
    b.op("RESHAPE", [h, b.const(np.array([2, 8], dtype=np.int32))], [pair])
    w = b.const(rng.integers(-127, 128, (5, 8), dtype=np.int8), scale=0.01)
    y = b.activation((2, 5), "int8", scale=0.3, zero_point=-3)
    b.op("FULLY_CONNECTED", [pair, w, -1], [y])
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("board", ["nucleo-f767", "mps2-an386", "mps3-an547"])
def test_mat_mult_bit_exact_on_dsp_twins(board: str, workdir: Path) -> None:
    model = chain_model(seed=5)
    gen = generate(import_model(model, source="mm chain"))
    variants = [low.variant for low in gen.lowered.values()]
    assert variants.count("conv_2d_1x1_s8") == 11 and variants.count("fully_connected_s8") == 5
    pairs = [low for low in gen.lowered.values() if low.function == "mcu_conv_2d_1x1_s8_pairs"]
    assert len(pairs) == 8
    target = resolve_target(load_board(board), emulate=True)
    exact_on_twin(gen, model, target, workdir / board, seeds=(0, 1, 2))
