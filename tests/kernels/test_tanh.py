"""TANH against TFLM: int8 (every input value, many input scales) and float32."""

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

ALL_INT8 = np.arange(-128, 128, dtype=np.int8)


def tanh_model(
    shape: tuple[int, ...],
    dtype: str,
    in_q: tuple[float, int] | None = None,
    out_q: tuple[float, int] | None = None,
) -> GraphBuilder:
    b = GraphBuilder()
    x = b.input(shape, dtype, scale=in_q and in_q[0], zero_point=in_q and in_q[1])
    y = b.activation(shape, dtype, scale=out_q and out_q[0], zero_point=out_q and out_q[1])
    b.op("TANH", [x], [y])
    b.output(y)
    return b


@pytest.mark.parametrize(
    "scale, zero_point",
    [
        (1 / 32, 0),  # power of two
        (0.0235, -3),
        (0.1, 10),
        (0.5, -128),  # most inputs saturate
        (0.0012, 5),  # tiny range: no saturation
        (2.0, 3),  # coarse: radius of a few steps
        (9.0, 0),  # radius 0: every input saturates
        (0.047, 127),
    ],
)
def test_tanh_int8_every_input(scale: float, zero_point: int) -> None:
    b = tanh_model((2, 128), "int8", (scale, zero_point), (1 / 128, 0))
    assert_matches_tflm(b.tflite(), inputs=[[ALL_INT8.reshape(2, 128)]])


def test_tanh_int8_output_quantization_ignored_as_tflm() -> None:
    """TFLM does not read the int8 output quantization; neither does mcugen."""
    b = tanh_model((5, 3, 9), "int8", (0.06, 4), (0.02, 7))
    assert_matches_tflm(b.tflite(), samples=3)


def test_tanh_float32() -> None:
    b = tanh_model((3, 85), "float32")
    wide = np.linspace(-12.0, 12.0, 249, dtype=np.float32)
    edges = np.array([0.0, -0.0, 1e-7, -1e-7, 9.5, -9.5], dtype=np.float32)
    sample = np.concatenate([wide, edges]).reshape(3, 85)
    assert_matches_tflm(b.tflite(), inputs=[[sample]])
    assert_matches_tflm(b.tflite(), samples=3)


def test_tanh_rejects_mixed_types() -> None:
    b = GraphBuilder()
    x = b.input((8,), "float32")
    y = b.activation((8,), "int8", scale=1 / 128, zero_point=0)
    b.op("TANH", [x], [y])
    graph = b.graph()
    with pytest.raises(UnsupportedError, match="TANH"):
        lower(graph, graph.operators[0])


ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)


@pytest.mark.parametrize(
    "scale",
    [
        1 / 4096,  # power of two: multiplier 0
        1 / 2048,
        1 / 32768,
        1e-3,
        3e-4,
        2.5e-3,  # large inputs saturate
        1 / 1024,
    ],
)
def test_tanh_int16_every_input(scale: float) -> None:
    b = tanh_model((256, 256), "int16", (scale, 0), (1 / 32768, 0))
    assert_matches_tflm(b.tflite(), inputs=[[ALL_INT16]])


@pytest.mark.parametrize(
    "in_q, out_q", [((1 / 4096, 3), (1 / 32768, 0)), ((1e-3, 0), (1 / 16384, 0))]
)
def test_tanh_int16_rejects_other_quantization(
    in_q: tuple[float, int], out_q: tuple[float, int]
) -> None:
    graph = tanh_model((8,), "int16", in_q, out_q).graph()
    with pytest.raises(UnsupportedError, match="TANH.*int16"):
        lower(graph, graph.operators[0])
