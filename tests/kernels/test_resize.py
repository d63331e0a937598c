"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR against TFLM (int8 bit-exact, float32 close)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_write import write_model
from support import assert_matches_tflm

QUANT: dict[str, dict[str, Any]] = {
    "int8": {"scale": 0.05, "zero_point": -3},
    "int16": {"scale": 0.001, "zero_point": 0},
    "float32": {},
}

# (input NHWC, output (h, w), align_corners, half_pixel_centers)
Case = tuple[tuple[int, int, int, int], tuple[int, int], bool, bool]
COMMON: list[Case] = [
    ((1, 4, 4, 3), (8, 8), False, False),  # x2 upsampling
    ((2, 3, 5, 2), (7, 9), False, False),  # non-integer ratios, two batches
    ((1, 9, 7, 4), (4, 3), False, False),  # downsampling
    ((1, 5, 5, 3), (9, 7), True, False),  # aligned corners
    ((1, 1, 1, 5), (6, 6), True, False),  # 1x1 -> NxN with aligned corners (scale 0)
    ((1, 4, 4, 2), (1, 1), True, False),  # aligned corners with a 1-pixel output (plain scale)
    ((1, 5, 3, 3), (11, 7), False, True),  # half-pixel centres, upsampling
    ((1, 8, 7, 2), (3, 4), False, True),  # half-pixel centres, downsampling
    ((1, 6, 6, 1), (6, 6), False, False),  # identity
]


def with_arena_room(b: GraphBuilder, activation_bytes: int) -> bytes:
    """The model, padded with an unused metadata buffer: the TFLM harness sizes its arena as ten
    times the model's size, too small for a tiny model with large activations."""
    graph = dataclasses.replace(b.graph(), metadata={"arena_room": bytes(activation_bytes // 8)})
    return write_model(graph)


def resize_model(
    opcode: str,
    dtype: str,
    in_shape: tuple[int, ...],
    out_hw: tuple[int, int],
    align: bool,
    half: bool,
    out_quant: dict[str, Any] | None = None,
) -> bytes:
    b = GraphBuilder()
    x = b.input(in_shape, dtype, **QUANT[dtype])
    size = b.const(np.array(out_hw, dtype=np.int32))
    y_shape = (in_shape[0], *out_hw, in_shape[3])
    y = b.activation(y_shape, dtype, **(out_quant if out_quant is not None else QUANT[dtype]))
    b.op(opcode, [x, size], [y], align_corners=align, half_pixel_centers=half)
    b.output(y)
    elem = np.dtype(dtype).itemsize
    return with_arena_room(b, elem * (int(np.prod(in_shape)) + int(np.prod(y_shape))))


def lower_single(model_graph: GraphBuilder) -> None:
    graph = model_graph.graph()
    lower(graph, graph.operators[0])


# --- RESIZE_NEAREST_NEIGHBOR ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("case", COMMON + [((1, 5, 6, 2), (9, 4), True, True)])
def test_nearest_neighbor(dtype: str, case: Case) -> None:
    # TFLM's nearest neighbour accepts align_corners together with half_pixel_centers (last case).
    assert_matches_tflm(resize_model("RESIZE_NEAREST_NEIGHBOR", dtype, *case))


def test_nearest_neighbor_int16() -> None:
    assert_matches_tflm(
        resize_model("RESIZE_NEAREST_NEIGHBOR", "int16", (1, 3, 5, 2), (7, 8), False, True)
    )


# --- RESIZE_BILINEAR ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("case", COMMON)
def test_bilinear(dtype: str, case: Case) -> None:
    assert_matches_tflm(resize_model("RESIZE_BILINEAR", dtype, *case))


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_bilinear_deeplab_like(dtype: str) -> None:
    # deeplabv3_f32.tflite: 33x33 -> 257x257 with aligned corners (fewer channels here).
    assert_matches_tflm(
        resize_model("RESIZE_BILINEAR", dtype, (1, 33, 33, 2), (257, 257), True, False), samples=2
    )


@pytest.mark.parametrize(
    "case",
    [
        ((1, 7, 5, 3), (16, 13), False, False),
        ((1, 7, 5, 3), (16, 13), False, True),
        ((1, 13, 11, 2), (5, 6), False, True),
    ],
)
def test_bilinear_int8_rounding_ratios(case: Case) -> None:
    # Q10 scales that do not divide evenly: TFLM rounds the scale, then each Q20 product.
    assert_matches_tflm(resize_model("RESIZE_BILINEAR", "int8", *case))


@pytest.mark.parametrize(
    ("opcode", "half"), [("RESIZE_NEAREST_NEIGHBOR", False), ("RESIZE_BILINEAR", True)]
)
def test_ignores_output_quantization(opcode: str, half: bool) -> None:
    # TFLM copies raw values even when the output's scale/zero point differ from the input's.
    out_quant = {"scale": 0.2, "zero_point": 10}
    assert_matches_tflm(resize_model(opcode, "int8", (1, 3, 3, 2), (6, 5), False, half, out_quant))


# --- rejections -----------------------------------------------------------------------------------


def builder_for(
    opcode: str,
    in_shape: tuple[int, ...],
    size: np.ndarray,
    y_shape: tuple[int, ...],
    dtype: str = "float32",
    const_size: bool = True,
    **opts: bool,
) -> GraphBuilder:
    b = GraphBuilder()
    x = b.input(in_shape, dtype, **QUANT[dtype])
    s = b.const(size) if const_size else b.input(size.shape, "int32")
    y = b.activation(y_shape, dtype, **QUANT[dtype])
    b.op(opcode, [x, s], [y], **opts)
    b.output(y)
    return b


@pytest.mark.parametrize("opcode", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
def test_rejects_bad_models(opcode: str) -> None:
    size = np.array([4, 4], np.int32)
    bad = [
        builder_for(opcode, (1, 2, 2, 1), size, (1, 4, 4, 1), const_size=False),
        builder_for(opcode, (2, 2, 1), size, (4, 4, 1)),
        builder_for(opcode, (1, 2, 2, 1), size, (1, 4, 5, 1)),
        builder_for(opcode, (1, 2, 2, 1), np.array([4, 4, 4], np.int32), (1, 4, 4, 1)),
        builder_for(opcode, (1, 2, 2, 1), size.astype(np.int64), (1, 4, 4, 1)),
    ]
    for b in bad:
        with pytest.raises(UnsupportedError, match=opcode):
            lower_single(b)


def test_bilinear_rejects_align_corners_with_half_pixel() -> None:
    b = builder_for(
        "RESIZE_BILINEAR",
        (1, 2, 2, 1),
        np.array([4, 4], np.int32),
        (1, 4, 4, 1),
        align_corners=True,
        half_pixel_centers=True,
    )
    with pytest.raises(UnsupportedError, match="RESIZE_BILINEAR.*half_pixel_centers"):
        lower_single(b)


def test_bilinear_int8_rejects_ratios_read_outside_input() -> None:
    # 1 -> 70 rows: TFLM's Q10 scale rounds 1024/70 = 14.63 up to 15, so output row 69 maps to
    # 1035/1024 and TFLM reads row 1 of a one-row input, outside the image: with two batches,
    # batch 0's last row changes with batch 1's data. The float path is fine.
    size = np.array([70, 4], np.int32)
    b = builder_for("RESIZE_BILINEAR", (1, 1, 4, 2), size, (1, 70, 4, 2), dtype="int8")
    with pytest.raises(UnsupportedError, match="RESIZE_BILINEAR.*outside the input"):
        lower_single(b)
    lower_single(builder_for("RESIZE_BILINEAR", (1, 1, 4, 2), size, (1, 70, 4, 2)))
