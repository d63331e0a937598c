"""CAST against TFLM: every pair of int8, int16, int32 and uint32 on full-range inputs (values
kept modulo 2^bits of the output type); unsupported types and sizes rejected."""

from __future__ import annotations

import pytest

from mcugen.errors import McugenError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm, lower_only

TYPES = ("int8", "int16", "int32", "uint32")


def cast_model(
    src: str, dst: str, shape: tuple[int, ...], out_shape: tuple[int, ...] = ()
) -> bytes:
    b = GraphBuilder()
    x = b.input(shape, src)
    y = b.activation(out_shape or shape, dst)
    b.op("CAST", [x], [y])
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("dst", TYPES)
@pytest.mark.parametrize("src", TYPES)
def test_cast_matches_tflm(src: str, dst: str) -> None:
    assert_matches_tflm(cast_model(src, dst, (3, 41)), samples=2)


def test_cast_rejects_float_and_size_mismatch() -> None:
    with pytest.raises(McugenError, match="type float32"):
        lower_only(cast_model("float32", "int32", (4,)))
    with pytest.raises(McugenError, match="differ in size"):
        lower_only(cast_model("int32", "int8", (4,), (5,)))
