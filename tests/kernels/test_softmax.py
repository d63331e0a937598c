"""SOFTMAX against TFLM: int8 (int8 and int16 outputs) and int16 (lookup tables) bit-exact,
float32 close."""

import pytest

from mcugen.codegen.lower import Array, lower
from mcugen.codegen.lower.softmax import input_radius, preprocess_softmax_scaling
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import assert_matches_tflm

OUT_Q = {"int8": (1.0 / 256, -128), "int16": (1.0 / 65536, -32768), "float32": (None, None)}
INT16_OUT_Q = (1.0 / 32768, 0)


def softmax_model(
    shape: tuple[int, ...],
    beta: float,
    in_dtype: str = "int8",
    out_dtype: str | None = None,
    in_q: tuple[float, int] = (0.1, 3),
    out_q: tuple[float, int] | None = None,
) -> bytes:
    out_dtype = out_dtype or in_dtype
    scale, zp = in_q if in_dtype != "float32" else (None, None)
    oscale, ozp = out_q or OUT_Q[out_dtype]
    b = GraphBuilder()
    x = b.input(shape, in_dtype, scale=scale, zero_point=zp)
    y = b.activation(shape, out_dtype, scale=oscale, zero_point=ozp)
    b.op("SOFTMAX", [x], [y], beta=beta)
    b.output(y)
    return b.tflite()


# (shape, beta, input quantization)
CASES = [
    ((1, 12), 1.0, (0.1, 3)),  # KWS DS-CNN: 12 classes
    ((3, 10), 1.0, (0.25, -20)),
    ((2, 3, 7), 0.5, (0.05, 0)),
    ((4, 33), 2.0, (0.3, 10)),  # many differences below diff_min
    ((1, 521), 1.0, (0.02, -128)),  # YAMNet-sized row, small differences
    ((5, 1), 1.0, (0.1, 0)),  # one class: always 1.0
]


@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_softmax_int8_bit_exact(case: tuple, out_dtype: str) -> None:
    shape, beta, in_q = case
    assert_matches_tflm(softmax_model(shape, beta, "int8", out_dtype, in_q))


@pytest.mark.parametrize("case", CASES[:4], ids=[f"case{i}" for i in range(4)])
def test_softmax_float32_close(case: tuple) -> None:
    shape, beta, _ = case
    assert_matches_tflm(softmax_model(shape, beta, "float32"))


def test_scaling_matches_tflm_formulas() -> None:
    multiplier, shift = preprocess_softmax_scaling(1.0, 0.1)
    assert (multiplier, shift) == (1717986918, 23)  # 0.1 * 2^26 = 0.8 * 2^23
    assert input_radius(shift) == (31 << 26) >> 23


@pytest.mark.parametrize(
    ("in_dtype", "out_dtype", "out_q"),
    [
        ("int8", "int8", (1.0 / 128, -128)),
        ("int8", "int8", (1.0 / 256, 0)),
        ("int8", "int16", (1.0 / 32768, 0)),
        ("int16", "int16", (1.0 / 16384, 0)),
        ("int16", "int16", (1.0 / 32768, 3)),
        ("int16", "int8", (1.0 / 256, -128)),
    ],
)
def test_softmax_rejects_unsupported_quantization(
    in_dtype: str, out_dtype: str, out_q: tuple[float, int]
) -> None:
    model = softmax_model((1, 10), 1.0, in_dtype, out_dtype, (0.1, 0), out_q)
    with pytest.raises(UnsupportedError, match="SOFTMAX"):
        generate(import_model(model, source="test model"))


# (shape, beta, input scale): int16 input and output, zero points 0
INT16_CASES = [
    ((1, 12), 1.0, 1e-3),
    ((3, 10), 1.0, 5e-4),
    ((2, 3, 7), 0.5, 2e-3),
    ((4, 33), 2.0, 1e-3),  # differences beyond -10 after scaling: exp 0 from the table
    ((1, 521), 1.0, 1e-4),  # long row, small differences
    ((5, 1), 1.0, 1e-3),  # one class
    ((2, 16), 1.0, 10.0 / 32768),  # the input range spans the table exactly
]


@pytest.mark.parametrize("case", INT16_CASES, ids=[f"case{i}" for i in range(len(INT16_CASES))])
def test_softmax_int16_bit_exact(case: tuple) -> None:
    shape, beta, in_scale = case
    model = softmax_model(shape, beta, "int16", "int16", (in_scale, 0), INT16_OUT_Q)
    assert_matches_tflm(model, samples=8)


def test_softmax_int16_tables_match_known_points() -> None:
    """exp(0) and 1 / (1 + 0) sit at the top of Q0.15; exp(-10) and 1/2 at the bottom and middle."""
    graph = import_model(softmax_model((1, 4), 1.0, "int16", "int16", (1e-3, 0), INT16_OUT_Q))
    params = dict(lower(graph, graph.operators[0]).params)
    exp_lut, reciprocal = params["exp_lut"], params["one_over_one_plus_x_lut"]
    assert isinstance(exp_lut, Array) and isinstance(reciprocal, Array)
    assert len(exp_lut.values) == len(reciprocal.values) == 513
    assert exp_lut.values[-1] == 32767 and 0 <= exp_lut.values[0] <= 2
    assert reciprocal.values[0] == 32767 and abs(reciprocal.values[-1] - 16384) <= 1
