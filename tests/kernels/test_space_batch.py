"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND against TFLM (int8 and float32; 4-D and 3-D).

TFLM quirk (tflite-micro issues 1646, 2319): TFLM's SPACE_TO_BATCH_ND never initialises the pad
value (SpaceToBatchParams::output_offset is allocated in Init and never written), so padded
positions hold an arbitrary byte (seen: 0x76, 0x88, 0x02 in successive interpreters). That is what
breaks dilated convolutions (SPACE_TO_BATCH_ND -> CONV_2D -> BATCH_TO_SPACE_ND) in TFLM. mcugen
pads as TFLite does: the output zero point for int8, 0.0 for float32. Tests with padding therefore
compare with TFLM outside the padded positions and with a numpy model of TFLite inside them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.link.host_run import random_inputs
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from support import assert_matches_tflm, mcugen_outputs, tflm_outputs

QUANT: dict[str, dict[str, Any]] = {"int8": {"scale": 0.1, "zero_point": -128}, "float32": {}}
Pairs = list[list[int]]


def s2b_reference(x: np.ndarray, block: list[int], pads: Pairs, pad_value: float) -> np.ndarray:
    """TFLite's SPACE_TO_BATCH_ND in numpy (3-D inputs as NH1C)."""
    x4 = x if x.ndim == 4 else x[:, :, None, :]
    b4 = block if x.ndim == 4 else [block[0], 1]
    p4 = pads if x.ndim == 4 else [pads[0], [0, 0]]
    padded = np.pad(x4, [(0, 0), tuple(p4[0]), tuple(p4[1]), (0, 0)], constant_values=pad_value)
    n, h, w, c = padded.shape
    tiles = padded.reshape(n, h // b4[0], b4[0], w // b4[1], b4[1], c).transpose(2, 4, 0, 1, 3, 5)
    out = tiles.reshape(n * b4[0] * b4[1], h // b4[0], w // b4[1], c)
    return out if x.ndim == 4 else out[:, :, 0, :]


def s2b_shape(shape: tuple[int, ...], block: list[int], pads: Pairs) -> tuple[int, ...]:
    spatial = [(s + a + b) // k for s, k, (a, b) in zip(shape[1:-1], block, pads, strict=True)]
    return (shape[0] * int(np.prod(block)), *spatial, shape[-1])


def b2s_shape(shape: tuple[int, ...], block: list[int], crops: Pairs) -> tuple[int, ...]:
    spatial = [s * k - a - b for s, k, (a, b) in zip(shape[1:-1], block, crops, strict=True)]
    return (shape[0] // int(np.prod(block)), *spatial, shape[-1])


def add_op(
    b: GraphBuilder,
    opcode: str,
    x: int,
    shape: tuple[int, ...],
    block: list[int],
    amounts: Pairs,
    dtype: str,
    out_shape: tuple[int, ...] | None = None,
) -> int:
    if out_shape is None:
        fn = s2b_shape if opcode == "SPACE_TO_BATCH_ND" else b2s_shape
        out_shape = fn(shape, block, amounts)
    y = b.activation(out_shape, dtype, **QUANT[dtype])
    consts = [b.const(np.array(block, np.int32)), b.const(np.array(amounts, np.int32))]
    b.op(opcode, [x, *consts], [y])
    return y


def single_op(
    opcode: str,
    shape: tuple[int, ...],
    block: list[int],
    amounts: Pairs,
    dtype: str,
    out_shape: tuple[int, ...] | None = None,
) -> GraphBuilder:
    b = GraphBuilder()
    x = b.input(shape, dtype, **QUANT[dtype])
    b.output(add_op(b, opcode, x, shape, block, amounts, dtype, out_shape))
    return b


# --- SPACE_TO_BATCH_ND ----------------------------------------------------------------------------

UNPADDED = [
    ((1, 4, 4, 3), [2, 2], [[0, 0], [0, 0]]),
    ((2, 6, 9, 2), [2, 3], [[0, 0], [0, 0]]),
    ((1, 6, 5), [3], [[0, 0]]),  # 3-D NHC
    ((3, 5, 7, 1), [5, 7], [[0, 0], [0, 0]]),
]
PADDED = [
    ((1, 7, 7, 3), [2, 2], [[2, 3], [2, 3]]),  # converter's dilation-2 SAME 3x3 on 7x7
    ((2, 5, 3, 2), [3, 2], [[2, 2], [0, 1]]),
    ((1, 3, 6, 4), [4, 1], [[0, 1], [1, 1]]),
    ((2, 5, 3), [2], [[1, 2]]),  # 3-D NHC
]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("shape, block, pads", UNPADDED)
def test_space_to_batch_unpadded(
    dtype: str, shape: tuple[int, ...], block: list[int], pads: Pairs
) -> None:
    assert_matches_tflm(single_op("SPACE_TO_BATCH_ND", shape, block, pads, dtype).tflite())


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("shape, block, pads", PADDED)
def test_space_to_batch_padded(
    dtype: str, shape: tuple[int, ...], block: list[int], pads: Pairs
) -> None:
    model = single_op("SPACE_TO_BATCH_ND", shape, block, pads, dtype).tflite()
    samples = [random_inputs(import_model(model, source="test"), seed) for seed in range(3)]
    ours, ref = mcugen_outputs(model, samples), tflm_outputs(model, samples)
    pad_value = QUANT[dtype].get("zero_point", 0)
    padded = s2b_reference(np.ones(shape), block, pads, 0) == 0
    assert padded.any()
    for sample, o, r in zip(samples, ours, ref, strict=True):
        mine, theirs = o[0], np.asarray(r[0]).reshape(o[0].shape)
        # Outside the padding TFLM is the oracle, bit for bit (the kernel only moves data).
        np.testing.assert_array_equal(mine[~padded], theirs[~padded])
        # Inside it TFLM holds an uninitialised byte; TFLite pads with the zero point / 0.0.
        np.testing.assert_array_equal(mine, s2b_reference(sample[0], block, pads, pad_value))


# --- BATCH_TO_SPACE_ND ----------------------------------------------------------------------------

B2S = [
    ((4, 2, 2, 3), [2, 2], [[0, 0], [0, 0]]),
    ((12, 3, 2, 2), [2, 3], [[1, 0], [0, 2]]),
    ((8, 6, 6, 1), [2, 2], [[0, 1], [0, 1]]),  # converter's crops after a dilated convolution
    ((6, 4, 3), [3], [[1, 1]]),  # 3-D NHC
    ((4, 3, 5), [2], [[0, 0]]),  # 3-D NHC, two output batches
    ((35, 2, 3, 2), [5, 7], [[3, 2], [4, 0]]),
]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("shape, block, crops", B2S)
def test_batch_to_space(dtype: str, shape: tuple[int, ...], block: list[int], crops: Pairs) -> None:
    assert_matches_tflm(single_op("BATCH_TO_SPACE_ND", shape, block, crops, dtype).tflite())


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("shape, block, pads", PADDED)
def test_padding_then_cropping_round_trip(
    dtype: str, shape: tuple[int, ...], block: list[int], pads: Pairs
) -> None:
    # The converter's frame of a dilated convolution without the convolution: cropping what was
    # padded removes every padded position, so TFLM is deterministic again and must match exactly.
    b = GraphBuilder()
    x = b.input(shape, dtype, **QUANT[dtype])
    mid = add_op(b, "SPACE_TO_BATCH_ND", x, shape, block, pads, dtype)
    b.output(add_op(b, "BATCH_TO_SPACE_ND", mid, s2b_shape(shape, block, pads), block, pads, dtype))
    assert_matches_tflm(b.tflite())


# --- rejections -----------------------------------------------------------------------------------


def assert_rejected(b: GraphBuilder, opcode: str, match: str = "") -> None:
    graph = b.graph()
    with pytest.raises(UnsupportedError, match=f"{opcode}.*{match}"):
        lower(graph, graph.operators[0])


@pytest.mark.parametrize("opcode", ["SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"])
def test_rejects_unsupported(opcode: str) -> None:
    zero = [[0, 0], [0, 0]]
    assert_rejected(
        single_op(opcode, (4, 2, 2, 2, 1), [2, 2], zero, "float32", (4, 2, 2, 2, 1)),
        opcode,
        "3-D or 4-D",
    )
    assert_rejected(single_op(opcode, (4, 2), [2], [[0, 0]], "float32", (4, 2)), opcode, "3-D")
    assert_rejected(
        single_op(opcode, (4, 4, 4, 1), [2], [[0, 0]], "float32", (4, 4, 4, 1)),
        opcode,
        "block_shape must have shape",
    )
    assert_rejected(
        single_op(opcode, (4, 4, 4, 1), [2, 0], zero, "float32", (4, 4, 4, 1)), opcode, "positive"
    )
    assert_rejected(
        single_op(opcode, (4, 4, 4, 1), [2, 2], [[0, -1], [0, 0]], "float32", (4, 4, 4, 1)),
        opcode,
        "non-negative",
    )
    assert_rejected(
        single_op(opcode, (4, 4, 4, 1), [2, 2], zero, "float32", (4, 4, 4, 1)),
        opcode,
        "output shape",
    )
    b = GraphBuilder()
    x = b.input((4, 4, 4, 1), "int16", scale=0.01, zero_point=0)
    y = b.activation((4, 4, 4, 1), "int16", scale=0.01, zero_point=0)
    b.op(opcode, [x, b.const(np.array([1, 1], np.int32)), b.const(np.zeros((2, 2), np.int32))], [y])
    assert_rejected(b, opcode, "int16")


def test_space_to_batch_rejects_indivisible_padding() -> None:
    b = single_op("SPACE_TO_BATCH_ND", (1, 5, 4, 1), [2, 2], [[0, 0], [0, 0]], "int8", (4, 2, 2, 1))
    assert_rejected(b, "SPACE_TO_BATCH_ND", "not a multiple")


def test_space_to_batch_rejects_non_constant_block() -> None:
    b = GraphBuilder()
    x = b.input((1, 4, 4, 1), "float32")
    block = b.input((2,), "int32")
    y = b.activation((4, 2, 2, 1), "float32")
    b.op("SPACE_TO_BATCH_ND", [x, block, b.const(np.zeros((2, 2), np.int32))], [y])
    assert_rejected(b, "SPACE_TO_BATCH_ND", "non-constant")


def test_batch_to_space_rejects_indivisible_batch() -> None:
    b = single_op("BATCH_TO_SPACE_ND", (6, 2, 2, 1), [2, 2], [[0, 0], [0, 0]], "int8", (1, 4, 4, 1))
    assert_rejected(b, "BATCH_TO_SPACE_ND", "block volume")
