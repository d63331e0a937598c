"""MUL against TFLM: int8 bit-exact (broadcasting, fused activations, multipliers above and below
one), float32 close."""

from __future__ import annotations

import pytest

from mcugen.errors import UnsupportedError
from support import (
    BROADCASTS,
    NONE,
    RELU,
    RELU6,
    RELU_N1_TO_1,
    TANH,
    Operand,
    assert_matches_tflm,
    binary_model,
    lower_only,
)


@pytest.mark.parametrize(
    "scales", [(0.5, 0.5, 0.01), (0.02, 0.03, 0.5), (1.0, 1.0, 1e-3), (0.001, 0.002, 10.0)]
)
def test_mul_int8_scales(scales: tuple[float, float, float]) -> None:
    """Real multipliers well above one (left shifts) and far below one."""
    a, b = Operand((5, 19), (scales[0], 7)), Operand((5, 19), (scales[1], -100))
    assert_matches_tflm(binary_model("MUL", "int8", a, b, (scales[2], 1)))


def test_mul_rejects_tanh_activation() -> None:
    model = binary_model(
        "MUL", "float32", Operand((3,)), Operand((3,)), fused_activation_function=TANH
    )
    with pytest.raises(UnsupportedError, match="MUL"):
        lower_only(model)


@pytest.mark.parametrize(
    "case", ["same", "channel_const", "scalar_const", "both_broadcast", "flat"]
)
@pytest.mark.parametrize("act", [NONE, RELU, RELU6, RELU_N1_TO_1])
def test_mul_int32(case: str, act: int) -> None:
    """TFLM's int32 MUL: the product wraps, then the activation clamps (full-range inputs)."""
    a, b = BROADCASTS[case]
    assert_matches_tflm(binary_model("MUL", "int32", a, b, fused_activation_function=act))


def test_mul_int32_rejects_broadcasting_over_5_dimensions() -> None:
    a, b = BROADCASTS["rank5"]
    with pytest.raises(UnsupportedError, match="4"):
        lower_only(binary_model("MUL", "int32", a, b))


@pytest.mark.parametrize("scales", [(1 / 32768, 1 / 32768, 1 / 32768), (0.5, 0.001, 10.0)])
def test_mul_int16_scales(scales: tuple[float, float, float]) -> None:
    a, b = Operand((3, 17), (scales[0], 0)), Operand((3, 17), (scales[1], 0))
    assert_matches_tflm(binary_model("MUL", "int16", a, b, (scales[2], 0)))
