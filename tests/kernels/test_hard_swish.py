"""HARD_SWISH against TFLM: int8 bit-exact over every input value (16-bit fixed-point pipeline,
left- and right-shifting relu-ish multipliers, tiny output multipliers), float32 close."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from support import assert_matches_tflm, lower_only, unary_model

ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 4, 4, 16)

CASES = {
    "mobilenet_v3": ((0.05, -10), (0.04, -60)),
    "same_quant": ((0.03, 5), (0.03, 5)),
    "reluish_left_shift": ((0.5, 0), (0.3, -100)),
    "reluish_saturating_shift": ((3.0, -20), (2.0, 0)),
    "reluish_right_shift": ((0.002, 0), (0.0015, -128)),
    "reluish_tiny": ((1e-5, 30), (1e-5, 0)),
    "output_shift_15": ((0.01, 0), (5.0, 0)),
    "output_shift_beyond_int16": ((0.01, 127), (60.0, -5)),
    "extreme_zero_points": ((0.1, 127), (0.08, -128)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hard_swish_int8_all_values(case: str) -> None:
    iq, oq = CASES[case]
    model = unary_model("HARD_SWISH", "int8", ALL_INT8.shape, iq, oq)
    assert_matches_tflm(model, inputs=[[ALL_INT8]])


def test_hard_swish_int8_random() -> None:
    assert_matches_tflm(unary_model("HARD_SWISH", "int8", (2, 7, 5, 3), (0.07, 3), (0.05, -40)))


@pytest.mark.parametrize("shape", [(1, 6, 5, 4), (53,)])
def test_hard_swish_float32(shape: tuple[int, ...]) -> None:
    """Inputs spread over [-12, 12] to cover both saturated ends of relu6(x + 3)."""
    rng = np.random.default_rng(7)
    inputs = [[(rng.standard_normal(shape) * 4).astype(np.float32)] for _ in range(3)]
    assert_matches_tflm(unary_model("HARD_SWISH", "float32", shape), inputs=inputs)


def test_hard_swish_rejects_output_scale_tflm_rejects() -> None:
    """TFLM's Prepare fails when the output multiplier needs a left shift."""
    model = unary_model("HARD_SWISH", "int8", (8,), (0.5, 0), (0.001, 0))
    with pytest.raises(UnsupportedError, match="HARD_SWISH"):
        lower_only(model)
