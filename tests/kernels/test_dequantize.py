"""DEQUANTIZE against TFLM: int8, int16 and uint8 to float32."""

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm


def dequantize_model(
    shape: tuple[int, ...],
    in_dtype: str,
    scale: object,
    zero_point: object,
    out_dtype: str = "float32",
) -> GraphBuilder:
    b = GraphBuilder()
    x = b.input(shape, in_dtype, scale=scale, zero_point=zero_point)
    y = b.activation(shape, out_dtype)
    b.op("DEQUANTIZE", [x], [y])
    b.output(y)
    return b


@pytest.mark.parametrize(
    "scale, zero_point",
    [
        (0.1468784660100937, 1),  # mcunet_vww_mixed output
        (0.00390625, -128),  # st_yamnet_aed / st_miniresnetv2 output
        (0.0123, 0),
        (3.7e-5, 127),
        (251.3, -77),
    ],
)
def test_dequantize_int8_every_value(scale: float, zero_point: int) -> None:
    model = dequantize_model((1, 16, 16), "int8", scale, zero_point).tflite()
    every = np.arange(-128, 128, dtype=np.int8).reshape(1, 16, 16)
    assert_matches_tflm(model, inputs=[[every]])


@pytest.mark.parametrize("scale, zero_point", [(1 / 32768, 0), (0.00071, -300), (1.7, 32767)])
def test_dequantize_int16(scale: float, zero_point: int) -> None:
    model = dequantize_model((3, 7, 11), "int16", scale, zero_point).tflite()
    assert_matches_tflm(model, samples=3)


def test_dequantize_uint8() -> None:
    model = dequantize_model((2, 128), "uint8", 0.02, 128).tflite()
    every = np.arange(256, dtype=np.uint8).reshape(2, 128)
    assert_matches_tflm(model, inputs=[[every]])


@pytest.mark.parametrize(
    "in_dtype, scale, zero_point, out_dtype, what",
    [
        ("int8", [0.1, 0.2], [0, 0], "float32", "per channel"),
        ("int32", 0.1, 0, "float32", "int32"),
        ("float16", None, None, "float32", "float16"),
        ("int8", 0.1, 0, "int16", "int16"),
    ],
)
def test_dequantize_rejects(
    in_dtype: str, scale: object, zero_point: object, out_dtype: str, what: str
) -> None:
    graph = dequantize_model((2,), in_dtype, scale, zero_point, out_dtype).graph()
    with pytest.raises(UnsupportedError, match=f"DEQUANTIZE.*{what}"):
        lower(graph, graph.operators[0])
