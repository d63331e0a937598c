"""PACK against TFLM: N inputs stacked on a new axis (positive and negative), several types."""

from typing import Any

import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

Q: dict[str, dict[str, Any]] = {"int8": {"scale": 0.04, "zero_point": -9}}


def pack_model(shape: tuple, count: int, axis: int, dtype: str) -> bytes:
    rank = len(shape) + 1
    pos = axis + rank if axis < 0 else axis
    out_shape = shape[:pos] + (count,) + shape[pos:]
    q = Q.get(dtype, {})
    b = GraphBuilder()
    xs = [b.input(shape, dtype, **q) for _ in range(count)]
    y = b.activation(out_shape, dtype, **q)
    b.op("PACK", xs, [y], values_count=count, axis=axis)
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("dtype", ["int8", "float32", "int32"])
@pytest.mark.parametrize(
    ("shape", "count", "axis"),
    [
        ((3, 5), 2, 0),
        ((3, 5), 3, 1),
        ((3, 5), 2, 2),
        ((3, 5), 4, -1),
        ((2, 3, 4), 3, -3),
        ((), 4, 0),
    ],
)
def test_pack(dtype: str, shape: tuple, count: int, axis: int) -> None:
    assert_matches_tflm(pack_model(shape, count, axis, dtype), samples=2)


def test_pack_int16_and_int64() -> None:
    assert_matches_tflm(pack_model((4, 3), 3, 1, "int16"), samples=2)
    assert_matches_tflm(pack_model((5,), 2, 1, "int64"), samples=2)


def test_pack_rejects_values_count_mismatch() -> None:
    b = GraphBuilder()
    xs = [b.input((3,), "float32") for _ in range(2)]
    y = b.activation((3, 3), "float32")
    b.op("PACK", xs, [y], values_count=3, axis=0)
    g = b.graph()
    with pytest.raises(UnsupportedError, match=r"operator 0 \(PACK\).*values_count"):
        lower(g, g.operators[0])
