"""LOG_SOFTMAX against TFLM: int8 bit-exact, float32 close."""

from __future__ import annotations

import pytest

from mcugen.errors import UnsupportedError
from support import assert_matches_tflm, lower_only, unary_model

OUT_Q = (16.0 / 256, 127)

# (shape, input quantization): row lengths from 1 to YAMNet-sized, scales from fine to coarse
INT8_CASES = [
    ((1, 12), (0.1, 3)),
    ((3, 10), (0.25, -20)),
    ((2, 3, 7), (0.05, 0)),
    ((4, 33), (0.3, 10)),  # many differences below diff_min
    ((1, 521), (0.02, -128)),
    ((5, 1), (0.1, 0)),  # one class: log(1) = 0
    ((2, 64), (1.5, 7)),  # coarse scale: input factor capped
    ((1, 2, 2, 9), (0.004, -50)),
]


@pytest.mark.parametrize("case", INT8_CASES, ids=[f"case{i}" for i in range(len(INT8_CASES))])
def test_log_softmax_int8_bit_exact(case: tuple) -> None:
    shape, in_q = case
    assert_matches_tflm(unary_model("LOG_SOFTMAX", "int8", shape, in_q, OUT_Q), samples=8)


@pytest.mark.parametrize("shape", [(1, 12), (3, 10), (2, 3, 7), (4, 1)])
def test_log_softmax_float32_close(shape: tuple[int, ...]) -> None:
    assert_matches_tflm(unary_model("LOG_SOFTMAX", "float32", shape))


@pytest.mark.parametrize("out_q", [(1.0 / 256, 127), (16.0 / 256, 0)])
def test_log_softmax_rejects_other_output_quantization(out_q: tuple[float, int]) -> None:
    with pytest.raises(UnsupportedError, match="LOG_SOFTMAX"):
        lower_only(unary_model("LOG_SOFTMAX", "int8", (1, 10), (0.1, 0), out_q))


def test_log_softmax_rejects_int16() -> None:
    with pytest.raises(UnsupportedError, match="LOG_SOFTMAX.*int16"):
        lower_only(unary_model("LOG_SOFTMAX", "int16", (1, 10), (0.1, 0), (0.1, 0)))
