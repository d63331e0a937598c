"""LOGISTIC and TANH against TFLM: int8 and int16 (every input value, many input scales) and
float32 (wide ranges and the cut-offs). Both share one kernel shape (mcu/unary.h): each test runs
for the operator it names, or for both."""

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm, lower_only, unary_model

OPS = ("LOGISTIC", "TANH")
ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)
ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
#: The int8 output quantization TFLM requires (scale 1/256 or 1/128, zero point -128 or 0).
INT8_OUT = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0)}

#: Input (scale, zero point) per operator: a real model's, a power of two, saturating and tiny
#: ranges, a radius of a few steps, radius 0 (every input saturates), an extreme zero point.
INT8_INPUTS = [
    ("LOGISTIC", 0.03877529129385948, -2),  # tflm_dtln_int8
    ("LOGISTIC", 1 / 16, 0),
    ("LOGISTIC", 0.02352941, 127),
    ("TANH", 1 / 32, 0),
    ("TANH", 0.0235, -3),
    ("TANH", 0.047, 127),
] + [
    (op, s, zp) for op in OPS for s, zp in [(0.1, 10), (0.5, -128), (0.0012, 5), (2.0, 3), (9.0, 0)]
]


@pytest.mark.parametrize("op, scale, zero_point", INT8_INPUTS)
def test_int8_every_input(op: str, scale: float, zero_point: int) -> None:
    model = unary_model(op, "int8", (2, 128), (scale, zero_point), INT8_OUT[op])
    assert_matches_tflm(model, inputs=[[ALL_INT8]])


@pytest.mark.parametrize("op, out_q", [("LOGISTIC", (0.01, -128)), ("TANH", (0.02, 7))])
def test_int8_output_scale_ignored_as_tflm(op: str, out_q: tuple[float, int]) -> None:
    """TFLM does not read the int8 output scale (TANH: nor its zero point); neither does mcugen."""
    assert_matches_tflm(unary_model(op, "int8", (3, 5, 7), (0.07, -9), out_q), samples=3)


#: Per operator: the range the float32 test sweeps, and inputs at the edges of its cut-offs.
FLOAT_SAMPLES = {
    "LOGISTIC": (30.0, [16.619047, 16.619049, -9.0, -9.000001, 0.0, -0.0]),
    "TANH": (12.0, [0.0, -0.0, 1e-7, -1e-7, 9.5, -9.5]),
}


@pytest.mark.parametrize("op", OPS)
def test_float32(op: str) -> None:
    model = unary_model(op, "float32", (2, 3, 41))
    wide, edges = FLOAT_SAMPLES[op]
    sweep = np.linspace(-wide, wide, 240, dtype=np.float32)
    sample = np.concatenate([sweep, np.array(edges, dtype=np.float32)]).reshape(2, 3, 41)
    assert_matches_tflm(model, inputs=[[sample]])
    assert_matches_tflm(model, samples=3)


def test_logistic_int8_rejects_other_output_zero_point() -> None:
    with pytest.raises(UnsupportedError, match="LOGISTIC"):
        lower_only(unary_model("LOGISTIC", "int8", (8,), (0.1, 0), (1 / 256, 0)))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("types", [("int8", "float32"), ("float32", "int8")])
def test_rejects_mixed_types(op: str, types: tuple[str, str]) -> None:
    b = GraphBuilder()
    ids = []
    for dtype, add in zip(types, (b.input, b.activation), strict=True):
        scale, zero_point = (1 / 128, 0) if dtype == "int8" else (None, None)
        ids.append(add((8,), dtype, scale=scale, zero_point=zero_point))
    x, y = ids
    b.op(op, [x], [y])
    b.output(y)
    with pytest.raises(UnsupportedError, match=op):
        lower_only(b.tflite())


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    "scale", [1 / 4096, 1 / 2048, 1 / 32768, 1e-3, 3e-4, 2.5e-3, 1 / 1024]
)  # 1/4096: a power of two (multiplier 0); 2.5e-3: large inputs saturate
def test_int16_every_input(op: str, scale: float) -> None:
    model = unary_model(op, "int16", (256, 256), (scale, 0), (1 / 32768, 0))
    assert_matches_tflm(model, inputs=[[ALL_INT16]])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    "in_q, out_q", [((1 / 4096, 3), (1 / 32768, 0)), ((1e-3, 0), (1 / 16384, 0))]
)
def test_int16_rejects_other_quantization(
    op: str, in_q: tuple[float, int], out_q: tuple[float, int]
) -> None:
    with pytest.raises(UnsupportedError, match=f"{op}.*int16"):
        lower_only(unary_model(op, "int16", (8,), in_q, out_q))
