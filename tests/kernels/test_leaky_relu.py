"""LEAKY_RELU against TFLM: int8 and int16 bit-exact (identity and alpha multipliers, negative and
large alphas), float32 close."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from support import assert_matches_tflm, lower_only, unary_model

CASES = {
    "keras_default": (0.3, (0.05, -10), (0.04, -60)),
    "small_alpha": (0.01, (0.1, 0), (0.1, 0)),
    "alpha_one_fifth": (0.2, (0.02, 30), (0.03, -20)),
    "alpha_above_one": (1.5, (0.05, 0), (0.1, 10)),
    "negative_alpha": (-0.25, (0.05, 5), (0.05, -5)),
    "upscaled_output": (0.1, (0.5, -128), (0.01, 0)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_leaky_relu_int8(case: str) -> None:
    alpha, iq, oq = CASES[case]
    assert_matches_tflm(unary_model("LEAKY_RELU", "int8", (1, 6, 7, 5), iq, oq, alpha=alpha))


@pytest.mark.parametrize("alpha", [0.2, 0.01, -0.5, 2.0])
def test_leaky_relu_float32(alpha: float) -> None:
    rng = np.random.default_rng(3)
    inputs = [[(rng.standard_normal((2, 5, 3, 4)) * 3).astype(np.float32)] for _ in range(3)]
    model = unary_model("LEAKY_RELU", "float32", (2, 5, 3, 4), alpha=alpha)
    assert_matches_tflm(model, inputs=inputs)


@pytest.mark.parametrize("case", sorted(CASES))
def test_leaky_relu_int16(case: str) -> None:
    """The int8 cases with symmetric int16 quantization, over every int16 input."""
    alpha, (s_in, _), (s_out, _) = CASES[case]
    model = unary_model("LEAKY_RELU", "int16", (256, 256), (s_in, 0), (s_out, 0), alpha=alpha)
    every = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
    assert_matches_tflm(model, inputs=[[every]])


def test_leaky_relu_int16_rejects_asymmetric_tensors() -> None:
    model = unary_model("LEAKY_RELU", "int16", (4,), (0.1, 1), (0.1, 0), alpha=0.2)
    with pytest.raises(UnsupportedError, match="LEAKY_RELU.*zero point"):
        lower_only(model)
