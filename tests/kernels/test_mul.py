"""MUL against TFLM: int8 bit-exact (broadcasting, fused activations, multipliers above and below
one), float32 close."""

from __future__ import annotations

import pytest

from mcugen.errors import UnsupportedError
from support import (
    BROADCASTS,
    FLOAT_BROADCASTS,
    INT16_BROADCASTS,
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


@pytest.mark.parametrize("case", sorted(BROADCASTS))
def test_mul_int8_broadcasts(case: str) -> None:
    a, b = BROADCASTS[case]
    assert_matches_tflm(binary_model("MUL", "int8", a, b, (0.004, -3)))


@pytest.mark.parametrize("act", [NONE, RELU, RELU6, RELU_N1_TO_1])
def test_mul_int8_activations(act: int) -> None:
    """Squeeze-excitation style: feature map times a per-channel gate."""
    a, b = Operand((1, 7, 5, 12), (0.1, -20)), Operand((1, 1, 1, 12), (1 / 256, -128))
    assert_matches_tflm(
        binary_model("MUL", "int8", a, b, (0.05, -8), fused_activation_function=act)
    )


@pytest.mark.parametrize(
    "scales", [(0.5, 0.5, 0.01), (0.02, 0.03, 0.5), (1.0, 1.0, 1e-3), (0.001, 0.002, 10.0)]
)
def test_mul_int8_scales(scales: tuple[float, float, float]) -> None:
    """Real multipliers well above one (left shifts) and far below one."""
    a, b = Operand((5, 19), (scales[0], 7)), Operand((5, 19), (scales[1], -100))
    assert_matches_tflm(binary_model("MUL", "int8", a, b, (scales[2], 1)))


@pytest.mark.parametrize("case", sorted(FLOAT_BROADCASTS))
@pytest.mark.parametrize("act", [NONE, RELU_N1_TO_1])
def test_mul_float32(case: str, act: int) -> None:
    a, b = FLOAT_BROADCASTS[case]
    assert_matches_tflm(binary_model("MUL", "float32", a, b, fused_activation_function=act))


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


@pytest.mark.parametrize("case", sorted(INT16_BROADCASTS))
def test_mul_int16_broadcasts(case: str) -> None:
    a, b = INT16_BROADCASTS[case]
    assert_matches_tflm(binary_model("MUL", "int16", a, b, (60.0, 0)))


@pytest.mark.parametrize("act", [NONE, RELU, RELU6, RELU_N1_TO_1])
def test_mul_int16_activations(act: int) -> None:
    a, b = Operand((1, 6, 6, 8), (2e-4, 0)), Operand((1, 1, 1, 8), (1e-4, 0), const=True)
    model = binary_model("MUL", "int16", a, b, (4e-4, 0), fused_activation_function=act)
    assert_matches_tflm(model)


@pytest.mark.parametrize("scales", [(1 / 32768, 1 / 32768, 1 / 32768), (0.5, 0.001, 10.0)])
def test_mul_int16_scales(scales: tuple[float, float, float]) -> None:
    a, b = Operand((3, 17), (scales[0], 0)), Operand((3, 17), (scales[1], 0))
    assert_matches_tflm(binary_model("MUL", "int16", a, b, (scales[2], 0)))


def test_mul_int16_rejects_asymmetric_operands() -> None:
    model = binary_model("MUL", "int16", Operand((4,), (0.1, 0)), Operand((4,), (0.1, 0)), (0.1, 1))
    with pytest.raises(UnsupportedError, match="MUL.*zero point"):
        lower_only(model)
