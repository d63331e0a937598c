"""SHAPE against TFLM, alone and feeding the shape input of a RESHAPE (a converter pattern)."""

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((1, 7, 5, 3), "int8"), ((4, 6), "float32"), ((9,), "int32"), ((2, 1, 3, 1, 2), "int8")],
)
def test_shape_alone(shape: tuple, dtype: str) -> None:
    """The model outputs the shape and a copy of the input (so the input is used by TFLM)."""
    b = GraphBuilder()
    x = b.input(shape, dtype, scale=0.1 if dtype == "int8" else None)
    s = b.activation((len(shape),), "int32")
    b.op("SHAPE", [x], [s], out_type=2)
    b.output(s)
    assert_matches_tflm(b.tflite(), samples=1)


def test_shape_feeds_reshape() -> None:
    """SHAPE of one tensor gives the (ignored by TFLM) shape input of a RESHAPE of another."""
    b = GraphBuilder()
    x = b.input((2, 12), "int8", scale=0.1, zero_point=1)
    ref = b.input((2, 3, 4), "int8", scale=0.1, zero_point=1)
    s = b.activation((3,), "int32")
    y = b.activation((2, 3, 4), "int8", scale=0.1, zero_point=1)
    b.op("SHAPE", [ref], [s], out_type=2)
    b.op("RESHAPE", [x, s], [y])
    b.output(y, s)
    assert_matches_tflm(b.tflite(), samples=2)


def test_shape_rejects_int64_output() -> None:
    """TFLM's SHAPE kernel writes int32 only."""
    b = GraphBuilder()
    x = b.input((2, 3), "float32")
    s = b.activation((2,), "int64")
    b.op("SHAPE", [x], [s], out_type=4)
    g = b.graph()
    with pytest.raises(UnsupportedError, match=r"operator 0 \(SHAPE\).*int64"):
        lower(g, g.operators[0])


def test_shape_constant_values() -> None:
    """The lowering stores exactly the input dims."""
    b = GraphBuilder()
    x = b.input((3, 1, 8), "float32")
    s = b.activation((3,), "int32")
    b.op("SHAPE", [x], [s])
    g = b.graph()
    params = dict(lower(g, g.operators[0]).params)
    assert params["count"] == 3
    assert np.array_equal(params["values"].values, (3, 1, 8))  # type: ignore[union-attr]
