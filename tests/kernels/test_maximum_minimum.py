"""MAXIMUM and MINIMUM against TFLM: int8 identical (raw comparison, broadcasting), float32."""

from __future__ import annotations

import pytest

from mcugen.errors import UnsupportedError
from support import (
    BROADCASTS,
    FLOAT_BROADCASTS,
    Operand,
    assert_matches_tflm,
    binary_model,
    lower_only,
)

SHARED = (0.05, -3)


def shared_quant(a: Operand, b: Operand) -> tuple[Operand, Operand]:
    """The operands with one quantization for both, as converters emit MAXIMUM/MINIMUM."""
    return Operand(a.shape, SHARED, a.const), Operand(b.shape, SHARED, b.const)


@pytest.mark.parametrize("opcode", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize(
    "case",
    [
        "same",
        "channel_const",
        "spatial",
        "scalar_const",
        "first_broadcasts",
        "both_broadcast",
        "rank6",
    ],
)
def test_minmax_int8(opcode: str, case: str) -> None:
    a, b = shared_quant(*BROADCASTS[case])
    assert_matches_tflm(binary_model(opcode, "int8", a, b, SHARED))


@pytest.mark.parametrize("opcode", ["MAXIMUM", "MINIMUM"])
def test_minmax_int8_mixed_quantization_compares_raw(opcode: str) -> None:
    """TFLM does not check the quantizations; it compares raw values. mcugen matches it."""
    a, b = Operand((3, 11), (0.5, 10)), Operand((3, 11), (0.01, -100))
    assert_matches_tflm(binary_model(opcode, "int8", a, b, (0.2, 0)))


@pytest.mark.parametrize("opcode", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("case", ["same", "channel_const", "both_broadcast", "scalar_const"])
def test_minmax_float32(opcode: str, case: str) -> None:
    a, b = FLOAT_BROADCASTS[case]
    assert_matches_tflm(binary_model(opcode, "float32", a, b))


@pytest.mark.parametrize("opcode", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("case", ["same", "scalar_const", "both_broadcast", "rank6"])
def test_minmax_int32(opcode: str, case: str) -> None:
    a, b = BROADCASTS[case]
    assert_matches_tflm(binary_model(opcode, "int32", a, b))


@pytest.mark.parametrize("opcode", ["MAXIMUM", "MINIMUM"])
def test_minmax_rejects_bad_broadcast(opcode: str) -> None:
    from mcugen.model.builder import GraphBuilder

    b = GraphBuilder()
    x = b.input((2, 3), "float32")
    w = b.input((2, 4), "float32")
    y = b.activation((2, 4), "float32")
    b.op(opcode, [x, w], [y])
    b.output(y)
    with pytest.raises(UnsupportedError, match=opcode):
        lower_only(b.tflite())


def test_minmax_rejects_uint8() -> None:
    model = binary_model("MAXIMUM", "uint8", Operand((4,), (0.1, 128)), Operand((4,), (0.1, 128)))
    with pytest.raises(UnsupportedError, match="MAXIMUM"):
        lower_only(model)
