"""QUANTIZE against TFLM: float32 -> int8/int16 and integer requantization between types."""

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

SHAPE = (2, 9, 15)  # 270 elements


QParams = tuple[float, int] | tuple[list[float], list[int]]


def quantize_model(
    in_dtype: str, out_dtype: str, in_q: tuple[float, int] | None, out_q: QParams
) -> GraphBuilder:
    b = GraphBuilder()
    x = b.input(SHAPE, in_dtype, scale=in_q and in_q[0], zero_point=in_q and in_q[1])
    y = b.activation(SHAPE, out_dtype, scale=out_q[0], zero_point=out_q[1])
    b.op("QUANTIZE", [x], [y])
    b.output(y)
    return b


def float_sample(scale: float, zero_point: int, qmax: int) -> np.ndarray:
    """Values across and beyond the output range, plus exact rounding ties.

    Not |x / scale| >= 2^31: the C++ float-to-int32 cast is undefined there (TFLM on x86 gives
    the type minimum for +1e30; mcugen saturates, as TFLM does on Arm)."""
    rng = np.random.default_rng(1)
    n = int(np.prod(SHAPE))
    span = float(np.float32(scale)) * (qmax + abs(zero_point)) * 1.5
    values = rng.uniform(-span, span, n).astype(np.float32)
    ties = (np.arange(-30, 30, dtype=np.float32) + np.float32(0.5)) * np.float32(scale)
    values[: ties.size] = ties
    values[ties.size : ties.size + 4] = [0.0, -0.0, 1e6 * scale, -1e6 * scale]
    return values.reshape(SHAPE)


@pytest.mark.parametrize(
    "out_dtype, scale, zero_point, qmax",
    [
        ("int8", 0.007839307188987732, 0, 127),  # mcunet_vww_mixed input
        ("int8", 0.05, -7, 127),
        ("int8", 0.3, 100, 127),
        ("int8", 1e-3, -128, 127),
        ("int16", 1 / 32768, 0, 32767),
        ("int16", 0.0123, 17, 32767),
    ],
)
def test_quantize_float(out_dtype: str, scale: float, zero_point: int, qmax: int) -> None:
    model = quantize_model("float32", out_dtype, None, (scale, zero_point)).tflite()
    assert_matches_tflm(model, inputs=[[float_sample(scale, zero_point, qmax)]])
    assert_matches_tflm(model, samples=2)


@pytest.mark.parametrize(
    "in_dtype, in_q, out_dtype, out_q",
    [
        ("int8", (0.05, -7), "int8", (0.11, 3)),  # down-scaling
        ("int8", (0.2, 5), "int8", (0.03, -20)),  # up-scaling, saturates
        ("int8", (0.1, 4), "int8", (0.1, -9)),  # same scale, zero point shift
        ("int8", (0.02, 0), "uint8", (0.02, 128)),
        ("uint8", (0.02, 128), "int8", (0.02, 0)),
        ("uint8", (0.05, 100), "int8", (0.07, -3)),
        ("int8", (0.05, -1), "int16", (0.001, 0)),
        ("int8", (0.05, -1), "int32", (0.0001, 5)),
        ("int16", (0.0006249999860301614, 0), "int8", (0.05920833349227905, -128)),
        ("int16", (0.001, 3), "int16", (0.0007, -11)),
        ("int16", (1.5259021893143654e-05, -32768), "int32", (3.0518509447574615e-05, 0)),
        ("int32", (1e-4, 0), "int8", (1.3, 2)),
        ("int32", (1e-4, 7), "int16", (0.004, 0)),
    ],
)
def test_requantize(
    in_dtype: str, in_q: tuple[float, int], out_dtype: str, out_q: tuple[float, int]
) -> None:
    assert_matches_tflm(quantize_model(in_dtype, out_dtype, in_q, out_q).tflite(), samples=3)


@pytest.mark.parametrize(
    "in_dtype, in_q, out_dtype, out_q, what",
    [
        ("float32", None, "uint8", (0.1, 128), "uint8"),
        ("float32", None, "int32", (0.1, 0), "int32"),
        ("int16", (0.1, 0), "uint8", (0.1, 128), "int16 to uint8"),
        ("float32", None, "int8", ([0.1, 0.2], [0, 0]), "per channel"),
        ("int8", (1.0, 0), "int32", (1e-10, 0), "too large"),
    ],
)
def test_quantize_rejects(
    in_dtype: str, in_q: tuple[float, int] | None, out_dtype: str, out_q: QParams, what: str
) -> None:
    b = GraphBuilder()
    x = b.input((2,), in_dtype, scale=in_q and in_q[0], zero_point=in_q and in_q[1])
    y = b.activation((2,), out_dtype, scale=out_q[0], zero_point=out_q[1])
    b.op("QUANTIZE", [x], [y])
    graph = b.graph()
    with pytest.raises(UnsupportedError, match=f"QUANTIZE.*{what}"):
        lower(graph, graph.operators[0])
