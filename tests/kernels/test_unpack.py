"""UNPACK against TFLM: one output per index of the axis (positive and negative), several types."""

from typing import Any

import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

Q: dict[str, dict[str, Any]] = {"int8": {"scale": 0.04, "zero_point": 11}}


def unpack_model(shape: tuple, axis: int, dtype: str) -> bytes:
    pos = axis + len(shape) if axis < 0 else axis
    out_shape = shape[:pos] + shape[pos + 1 :]
    q = Q.get(dtype, {})
    b = GraphBuilder()
    x = b.input(shape, dtype, **q)
    ys = [b.activation(out_shape, dtype, **q) for _ in range(shape[pos])]
    b.op("UNPACK", [x], ys, num=shape[pos], axis=axis)
    b.output(*ys)
    return b.tflite()


@pytest.mark.parametrize("dtype", ["int8", "float32", "int32"])
@pytest.mark.parametrize(
    ("shape", "axis"),
    [((3, 5), 0), ((3, 5), 1), ((3, 5), -1), ((2, 3, 4), -2), ((1, 4, 2, 3), 3), ((4,), 0)],
)
def test_unpack(dtype: str, shape: tuple, axis: int) -> None:
    assert_matches_tflm(unpack_model(shape, axis, dtype), samples=2)


def test_unpack_int16() -> None:
    assert_matches_tflm(unpack_model((2, 5, 3), 1, "int16"), samples=2)


@pytest.mark.parametrize(
    ("in_shape", "dtype", "num", "match"),
    [((3, 2), "float32", 3, "num 3"), ((2, 2), "int64", 2, "int64")],
)
def test_unpack_rejects_num_mismatch_and_int64(
    in_shape: tuple[int, int], dtype: str, num: int, match: str
) -> None:
    b = GraphBuilder()
    x = b.input(in_shape, dtype)
    ys = [b.activation((2,), dtype) for _ in range(2)]
    b.op("UNPACK", [x], ys, num=num, axis=0)
    g = b.graph()
    with pytest.raises(UnsupportedError, match=r"operator 0 \(UNPACK\).*" + match):
        lower(g, g.operators[0])
