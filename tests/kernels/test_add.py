"""ADD against TFLM: int8 bit-exact (left_shift 20 scheme, broadcasting, fused activations),
int16 (left_shift 15) and int32 (wrapping) bit-exact, float32 close."""

from __future__ import annotations

import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import (
    BROADCASTS,
    RELU,
    TANH,
    Operand,
    assert_matches_tflm,
    binary_model,
    lower_only,
)


@pytest.mark.parametrize("scales", [(0.05, 0.05, 0.05), (0.5, 0.001, 0.02), (0.001, 0.4, 0.9)])
def test_add_int8_scales(scales: tuple[float, float, float]) -> None:
    a, b = Operand((3, 17), (scales[0], 3)), Operand((3, 17), (scales[1], -128))
    assert_matches_tflm(binary_model("ADD", "int8", a, b, (scales[2], 127)))


@pytest.mark.parametrize("case", sorted(BROADCASTS))
def test_add_int32_broadcasts(case: str) -> None:
    """TFLM's integer path: full-range random operands, so sums wrap as in TFLM."""
    a, b = BROADCASTS[case]
    assert_matches_tflm(binary_model("ADD", "int32", a, b))


def test_add_int32_rejects_quantized_operands() -> None:
    b = GraphBuilder()
    x = b.input((4,), "int32", scale=0.5, zero_point=0)
    y = b.activation((4,), "int32")
    b.op("ADD", [x, x], [y])
    b.output(y)
    with pytest.raises(UnsupportedError, match="ADD.*int32"):
        lower_only(b.tflite())


def test_add_int32_rejects_fused_activation() -> None:
    """TFLM clamps int32 sums to the whole range whatever the activation says."""
    model = binary_model(
        "ADD", "int32", Operand((4,)), Operand((4,)), fused_activation_function=RELU
    )
    with pytest.raises(UnsupportedError, match="ADD.*int32"):
        lower_only(model)


@pytest.mark.parametrize("scales", [(0.05, 0.05, 0.05), (0.5, 0.001, 0.02), (1e-5, 0.4, 0.9)])
def test_add_int16_scales(scales: tuple[float, float, float]) -> None:
    a, b = Operand((3, 17), (scales[0], 0)), Operand((3, 17), (scales[1], 0))
    assert_matches_tflm(binary_model("ADD", "int16", a, b, (scales[2], 0)))


def test_add_rejects_uint8() -> None:
    model = binary_model("ADD", "uint8", Operand((4,), (0.1, 0)), Operand((4,), (0.1, 0)))
    with pytest.raises(UnsupportedError, match="ADD"):
        lower_only(model)


def test_add_rejects_tanh_activation() -> None:
    model = binary_model(
        "ADD", "int8", Operand((4,)), Operand((4,)), fused_activation_function=TANH
    )
    with pytest.raises(UnsupportedError, match="ADD"):
        lower_only(model)


def test_add_rejects_output_scale_tflm_aborts_on() -> None:
    """TFLM's QuantizeMultiplierSmallerThanOneExp aborts when the output rescale is >= 1."""
    model = binary_model("ADD", "int8", Operand((4,), (0.5, 0)), Operand((4,)), (1e-7, 0))
    with pytest.raises(UnsupportedError, match="ADD"):
        lower_only(model)
