"""RELU and RELU6 against TFLM: int8 bit-exact (RELU requantizes, RELU6 clamps raw values),
float32 close."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from support import assert_matches_tflm, lower_only, unary_model

RELU_QUANTS = {
    "same": ((0.05, -3), (0.05, -3)),
    "converter_style": ((0.1, 12), (0.05, -128)),
    "upscale": ((0.02, 0), (0.3, -100)),
    "downscale": ((0.4, -128), (0.01, 5)),
    "positive_zero_point": ((0.05, 50), (0.05, 60)),
}


@pytest.mark.parametrize("case", sorted(RELU_QUANTS))
def test_relu_int8(case: str) -> None:
    iq, oq = RELU_QUANTS[case]
    assert_matches_tflm(unary_model("RELU", "int8", (1, 7, 5, 6), iq, oq))


RELU6_QUANTS = {
    "converter_style": ((6 / 255, -128), (6 / 255, -128)),
    "six_beyond_range": ((0.01, -20), (0.01, -20)),
    "wide_range": ((0.2, 3), (0.2, 3)),
    "output_quant_ignored": ((0.05, -10), (0.1, 40)),
}


@pytest.mark.parametrize("case", sorted(RELU6_QUANTS))
def test_relu6_int8(case: str) -> None:
    iq, oq = RELU6_QUANTS[case]
    assert_matches_tflm(unary_model("RELU6", "int8", (2, 3, 4, 5), iq, oq))


@pytest.mark.parametrize("opcode", ["RELU", "RELU6"])
@pytest.mark.parametrize("shape", [(1, 4, 4, 3), (37,), (2, 3, 1, 2, 5)])
def test_relu_float32(opcode: str, shape: tuple[int, ...]) -> None:
    """Inputs spread over [-16, 16] so that RELU6's upper bound is hit too."""
    rng = np.random.default_rng(len(shape))
    inputs = [[(rng.standard_normal(shape) * 5).astype(np.float32)] for _ in range(3)]
    assert_matches_tflm(unary_model(opcode, "float32", shape), inputs=inputs)


@pytest.mark.parametrize("opcode", ["RELU", "RELU6"])
def test_relu_rejects_int16(opcode: str) -> None:
    model = unary_model(opcode, "int16", (4,), (0.1, 0), (0.1, 0))
    with pytest.raises(UnsupportedError, match=opcode):
        lower_only(model)
