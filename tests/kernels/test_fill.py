"""FILL against TFLM: float32, int32 and int8 values, dims of every integer type TFLM accepts."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm, lower_only


def fill_model(
    shape: tuple[int, ...],
    dtype: str,
    dims_dtype: str = "int32",
    *,
    const_value: bool = False,
    dims: tuple[int, ...] | None = None,
    value_shape: tuple[int, ...] = (),
) -> bytes:
    b = GraphBuilder()
    scale, zero_point = (0.5, 3) if dtype == "int8" else (None, None)
    dims_id = b.const(np.array(dims if dims is not None else shape, dtype=dims_dtype))
    if const_value:
        value = b.const(np.full(value_shape, 7, dtype=dtype), scale=scale, zero_point=zero_point)
    else:
        value = b.input(value_shape, dtype, scale=scale, zero_point=zero_point)
    y = b.activation(shape, dtype, scale=scale, zero_point=zero_point)
    b.op("FILL", [dims_id, value], [y])
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8"])
@pytest.mark.parametrize("shape", [(5,), (2, 3), (1, 4, 3, 2), (2, 1, 3, 1, 2)])
def test_fill_bit_exact(dtype: str, shape: tuple[int, ...]) -> None:
    assert_matches_tflm(fill_model(shape, dtype))


@pytest.mark.parametrize("dims_dtype", ["int8", "int16", "int64"])
def test_fill_dims_types(dims_dtype: str) -> None:
    assert_matches_tflm(fill_model((3, 4), "float32", dims_dtype))


def test_fill_constant_value_beside_an_input() -> None:
    """A constant value: the model's input only feeds a second output."""
    b = GraphBuilder()
    x = b.input((2, 2), "int32")
    y = b.activation((2, 2), "int32")
    b.op("ADD", [x, x], [y])
    dims = b.const(np.array([3, 2], dtype=np.int32))
    filled = b.activation((3, 2), "int32")
    b.op("FILL", [dims, b.const(np.array(-9, dtype=np.int32))], [filled])
    b.output(y, filled)
    assert_matches_tflm(b.tflite())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dtype": "int16"},
        {"dtype": "float32", "dims": (3, 5)},
        {"dtype": "float32", "value_shape": (1,)},
        {"dtype": "float32", "dims_dtype": "float32"},
    ],
    ids=["int16", "dims_differ", "value_not_scalar", "float_dims"],
)
def test_fill_rejects(kwargs: dict) -> None:
    with pytest.raises(UnsupportedError, match="FILL"):
        lower_only(fill_model((3, 4), **kwargs))
