"""RESHAPE, SQUEEZE and EXPAND_DIMS against TFLM: byte copies into the output's static shape."""

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

QUANT = {"int8": {"scale": 0.05, "zero_point": -3}, "int16": {"scale": 0.01, "zero_point": 0}}


def _tensor_args(dtype: str) -> dict:
    return QUANT.get(dtype, {})


def reshape_model(in_shape: tuple, out_shape: tuple, dtype: str, shape_input: bool) -> bytes:
    b = GraphBuilder()
    x = b.input(in_shape, dtype, **_tensor_args(dtype))
    y = b.activation(out_shape, dtype, **_tensor_args(dtype))
    new_shape = [-1, *out_shape[1:]] if len(out_shape) > 1 else [-1]
    if shape_input:
        b.op("RESHAPE", [x, b.const(np.array(new_shape, np.int32))], [y])
    else:
        b.op("RESHAPE", [x], [y], new_shape=new_shape)
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("dtype", ["int8", "float32", "int16", "int32"])
@pytest.mark.parametrize(
    ("in_shape", "out_shape"),
    [
        ((1, 1, 1, 64), (1, 64)),
        ((1, 245), (1, 49, 5, 1)),
        ((1, 5, 3, 7), (1, 105)),
        ((3, 5), (15,)),
    ],
)
def test_reshape(dtype: str, in_shape: tuple, out_shape: tuple) -> None:
    assert_matches_tflm(reshape_model(in_shape, out_shape, dtype, shape_input=True), samples=2)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_reshape_with_new_shape_option_only(dtype: str) -> None:
    assert_matches_tflm(reshape_model((2, 3, 4), (2, 12), dtype, shape_input=False), samples=2)


def test_reshape_chain_between_ops() -> None:
    """Two reshapes back to back: the middle tensor lives in the arena between them."""
    b = GraphBuilder()
    x = b.input((1, 4, 4, 3), "int8", scale=0.1, zero_point=2)
    mid = b.activation((1, 48), "int8", scale=0.1, zero_point=2)
    y = b.activation((4, 12), "int8", scale=0.1, zero_point=2)
    b.op("RESHAPE", [x, b.const(np.array([1, 48], np.int32))], [mid])
    b.op("RESHAPE", [mid, b.const(np.array([4, 12], np.int32))], [y])
    b.output(y)
    assert_matches_tflm(b.tflite(), samples=2)


def squeeze_model(in_shape: tuple, out_shape: tuple, dims: tuple, dtype: str) -> bytes:
    b = GraphBuilder()
    x = b.input(in_shape, dtype, **_tensor_args(dtype))
    y = b.activation(out_shape, dtype, **_tensor_args(dtype))
    b.op("SQUEEZE", [x], [y], squeeze_dims=list(dims))
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("dtype", ["int8", "float32", "int32"])
@pytest.mark.parametrize(
    ("in_shape", "out_shape", "dims"),
    [
        ((1, 1, 1, 7), (1, 7), (1, 2)),
        ((1, 1, 1, 7), (7,), ()),
        ((3, 1, 5, 1), (3, 5), (-1, 1)),
        ((1, 9), (9,), (0,)),
    ],
)
def test_squeeze(dtype: str, in_shape: tuple, out_shape: tuple, dims: tuple) -> None:
    assert_matches_tflm(squeeze_model(in_shape, out_shape, dims, dtype), samples=2)


def expand_dims_model(in_shape: tuple, axis: int, dtype: str) -> bytes:
    rank = len(in_shape)
    pos = axis + rank + 1 if axis < 0 else axis
    out_shape = in_shape[:pos] + (1,) + in_shape[pos:]
    b = GraphBuilder()
    x = b.input(in_shape, dtype, **_tensor_args(dtype))
    y = b.activation(out_shape, dtype, **_tensor_args(dtype))
    b.op("EXPAND_DIMS", [x, b.const(np.array([axis], np.int32))], [y])
    b.output(y)
    return b.tflite()


@pytest.mark.parametrize("dtype", ["int8", "float32", "int16"])
@pytest.mark.parametrize(
    ("in_shape", "axis"), [((5, 7), 0), ((5, 7), 2), ((1, 5, 7), -1), ((9, 4), -3)]
)
def test_expand_dims(dtype: str, in_shape: tuple, axis: int) -> None:
    assert_matches_tflm(expand_dims_model(in_shape, axis, dtype), samples=2)


def _lower_first(model_graph: GraphBuilder) -> None:
    g = model_graph.graph()
    lower(g, g.operators[0])


def test_reshape_rejects_size_mismatch() -> None:
    b = GraphBuilder()
    x = b.input((2, 3), "int8", scale=0.1)
    y = b.activation((7,), "int8", scale=0.1)
    b.op("RESHAPE", [x, b.const(np.array([7], np.int32))], [y])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(RESHAPE\).*differ in size"):
        _lower_first(b)


def test_squeeze_rejects_non_unit_axis() -> None:
    b = GraphBuilder()
    x = b.input((1, 3, 1), "float32")
    y = b.activation((1,), "float32")
    b.op("SQUEEZE", [x], [y], squeeze_dims=[1])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(SQUEEZE\).*size-1"):
        _lower_first(b)


def test_expand_dims_rejects_int32_and_bad_axis() -> None:
    """TFLM's EXPAND_DIMS copies float32, int8 and int16 only."""
    b = GraphBuilder()
    x = b.input((3,), "int32")
    y = b.activation((1, 3), "int32")
    b.op("EXPAND_DIMS", [x, b.const(np.array([0], np.int32))], [y])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(EXPAND_DIMS\).*int32"):
        _lower_first(b)
    b = GraphBuilder()
    x = b.input((3,), "int8", scale=0.1)
    y = b.activation((1, 3), "int8", scale=0.1)
    b.op("EXPAND_DIMS", [x, b.const(np.array([-4], np.int32))], [y])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(EXPAND_DIMS\).*out of range"):
        _lower_first(b)
