"""ADD, SUB and MUL against TFLM, the tests they share: int8 and int16 bit-exact over the
broadcast cases and the fused activations, float32 close, asymmetric int16 rejected. Each
operator brings its output quantization and its cases; test_add/test_sub/test_mul.py hold what
is particular to one (rescale factors, int32, rejected options)."""

from __future__ import annotations

from dataclasses import dataclass

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
    Operand,
    Quant,
    assert_matches_tflm,
    binary_model,
    lower_only,
)


@dataclass(frozen=True)
class Spec:
    """One operator's cases: the int8 broadcasts and their output quantization, the int8
    activation test's operands and output, the int16 outputs, the float32 cases and activation."""

    int8_cases: tuple[str, ...]
    int8_out: Quant
    int8_act: tuple[Operand, Operand, Quant]
    int16_out: Quant
    int16_act_out: Quant
    float_cases: tuple[str, ...]
    float_act: int


ALL = tuple(sorted(BROADCASTS))
SPECS = {
    "ADD": Spec(
        ALL,
        (0.11, -4),
        (
            Operand((1, 6, 6, 8), (0.05, -10)),
            Operand((1, 1, 1, 8), (0.03, 4), const=True),
            (0.06, -30),
        ),
        (0.11, 0),
        (3e-4, 0),
        tuple(sorted(FLOAT_BROADCASTS)),
        RELU6,
    ),
    "SUB": Spec(
        (
            "same",
            "channel_const",
            "spatial",
            "scalar_const",
            "first_broadcasts",
            "rank_mismatch",
            "rank6",
        ),
        (0.13, 6),
        (Operand((2, 5, 5, 4), (0.07, 12)), Operand((4,), (0.05, -9), const=True), (0.05, 20)),
        (0.11, 0),
        (3e-4, 0),
        ("same", "channel_const", "both_broadcast", "scalar_const"),
        RELU,
    ),
    # MUL's activation test is squeeze-excitation style: a feature map times a per-channel gate
    "MUL": Spec(
        ALL,
        (0.004, -3),
        (Operand((1, 7, 5, 12), (0.1, -20)), Operand((1, 1, 1, 12), (1 / 256, -128)), (0.05, -8)),
        (60.0, 0),
        (4e-4, 0),
        tuple(sorted(FLOAT_BROADCASTS)),
        RELU_N1_TO_1,
    ),
}
ACTIVATIONS = [NONE, RELU, RELU6, RELU_N1_TO_1]


def cases(field: str) -> list[tuple[str, str]]:
    return [(op, case) for op, spec in SPECS.items() for case in getattr(spec, field)]


@pytest.mark.parametrize("op, case", cases("int8_cases"))
def test_int8_broadcasts(op: str, case: str) -> None:
    a, b = BROADCASTS[case]
    assert_matches_tflm(binary_model(op, "int8", a, b, SPECS[op].int8_out))


@pytest.mark.parametrize("op", SPECS)
@pytest.mark.parametrize("case", sorted(INT16_BROADCASTS))
def test_int16_broadcasts(op: str, case: str) -> None:
    a, b = INT16_BROADCASTS[case]
    assert_matches_tflm(binary_model(op, "int16", a, b, SPECS[op].int16_out))


@pytest.mark.parametrize("op", SPECS)
@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_activations(op: str, act: int, dtype: str) -> None:
    if dtype == "int8":
        a, b, out = SPECS[op].int8_act
    else:
        a, b = Operand((1, 6, 6, 8), (2e-4, 0)), Operand((1, 1, 1, 8), (1e-4, 0), const=True)
        out = SPECS[op].int16_act_out
    assert_matches_tflm(binary_model(op, dtype, a, b, out, fused_activation_function=act))


@pytest.mark.parametrize("op", SPECS)
@pytest.mark.parametrize("zero_points", [(1, 0, 0), (0, -3, 0), (0, 0, 5)])
def test_int16_rejects_asymmetric_operands(op: str, zero_points: tuple[int, int, int]) -> None:
    a, b = Operand((4,), (0.1, zero_points[0])), Operand((4,), (0.1, zero_points[1]))
    model = binary_model(op, "int16", a, b, (0.1, zero_points[2]))
    with pytest.raises(UnsupportedError, match=f"{op}.*zero point"):
        lower_only(model)


@pytest.mark.parametrize("op, case", cases("float_cases"))
@pytest.mark.parametrize("act", ["none", "op's"])
def test_float32(op: str, case: str, act: str) -> None:
    a, b = FLOAT_BROADCASTS[case]
    fused = NONE if act == "none" else SPECS[op].float_act
    assert_matches_tflm(binary_model(op, "float32", a, b, fused_activation_function=fused))
