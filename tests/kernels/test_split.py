"""SPLIT and SPLIT_V against TFLM: several outputs, negative axes, -1 in size_splits."""

from typing import Any

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

Q: dict[str, dict[str, Any]] = {"int8": {"scale": 0.05, "zero_point": 3}}


def _out_shapes(shape: tuple, axis: int, sizes: list[int]) -> list[tuple]:
    pos = axis + len(shape) if axis < 0 else axis
    return [shape[:pos] + (s,) + shape[pos + 1 :] for s in sizes]


def split_model(shape: tuple, axis: int, num: int, dtype: str) -> bytes:
    pos = axis + len(shape) if axis < 0 else axis
    q = Q.get(dtype, {})
    b = GraphBuilder()
    x = b.input(shape, dtype, **q)
    ys = [b.activation(s, dtype, **q) for s in _out_shapes(shape, axis, [shape[pos] // num] * num)]
    b.op("SPLIT", [b.const(np.array([axis], np.int32)), x], ys, num_splits=num)
    b.output(*ys)
    return b.tflite()


def split_v_model(shape: tuple, axis: int, size_splits: list[int], dtype: str) -> bytes:
    pos = axis + len(shape) if axis < 0 else axis
    sizes = [
        s if s >= 0 else shape[pos] - sum(v for v in size_splits if v >= 0) for s in size_splits
    ]
    q = Q.get(dtype, {})
    b = GraphBuilder()
    x = b.input(shape, dtype, **q)
    ys = [b.activation(s, dtype, **q) for s in _out_shapes(shape, axis, sizes)]
    splits = b.const(np.array(size_splits, np.int32))
    b.op("SPLIT_V", [x, splits, b.const(np.array(axis, np.int32))], ys, num_splits=len(sizes))
    b.output(*ys)
    return b.tflite()


@pytest.mark.parametrize("dtype", ["int8", "float32", "int32"])
@pytest.mark.parametrize(
    ("shape", "axis", "num"),
    [((1, 4, 4, 6), 3, 2), ((1, 4, 4, 6), -1, 3), ((6, 5), 0, 3), ((2, 9, 3), -2, 3), ((7,), 0, 1)],
)
def test_split(dtype: str, shape: tuple, axis: int, num: int) -> None:
    assert_matches_tflm(split_model(shape, axis, num, dtype), samples=2)


@pytest.mark.parametrize("dtype", ["int8", "float32", "int16"])
@pytest.mark.parametrize(
    ("shape", "axis", "size_splits"),
    [
        ((1, 3, 3, 10), 3, [2, 5, 3]),
        ((1, 3, 3, 10), -1, [4, -1]),
        ((9, 4), 0, [-1, 1, 1]),
        ((2, 7, 3), 1, [6, -1]),
        ((2, 7, 3), -3, [1, 1]),
    ],
)
def test_split_v(dtype: str, shape: tuple, axis: int, size_splits: list[int]) -> None:
    assert_matches_tflm(split_v_model(shape, axis, size_splits, dtype), samples=2)


def test_split_rejects_non_constant_axis_and_bad_type() -> None:
    b = GraphBuilder()
    axis = b.input((1,), "int32")
    x = b.input((4, 2), "float32")
    ys = [b.activation((2, 2), "float32") for _ in range(2)]
    b.op("SPLIT", [axis, x], ys, num_splits=2)
    g = b.graph()
    with pytest.raises(UnsupportedError, match=r"operator 0 \(SPLIT\).*non-constant axis"):
        lower(g, g.operators[0])
    b = GraphBuilder()
    x = b.input((4, 2), "int64")
    ys = [b.activation((2, 2), "int64") for _ in range(2)]
    b.op("SPLIT_V", [x, b.const(np.array([2, 2], np.int32)), b.const(np.array([0], np.int32))], ys)
    g = b.graph()
    with pytest.raises(UnsupportedError, match=r"operator 0 \(SPLIT_V\).*int64"):
        lower(g, g.operators[0])
