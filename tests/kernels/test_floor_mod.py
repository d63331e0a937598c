"""FLOOR_MOD against TFLM: float32 (the only type TFLM's kernel has), broadcasting, and in place
over either operand."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from support import (
    FLOAT_BROADCASTS,
    Operand,
    assert_matches_tflm,
    binary_model,
    generate_optimized,
    lower_only,
)


@pytest.mark.parametrize("case", sorted(FLOAT_BROADCASTS))
def test_floor_mod_float32(case: str) -> None:
    a, b = FLOAT_BROADCASTS[case]
    assert_matches_tflm(binary_model("FLOOR_MOD", "float32", a, b))


def test_floor_mod_signs_and_exact_multiples() -> None:
    """Every sign combination, zero remainders and remainders that need the divisor added."""
    b = GraphBuilder()
    x = b.input((2, 8), "float32")
    divisors = np.array([[1.5, -1.5, 0.25, -0.25, 3.0, -3.0, 0.7, -0.7]] * 2, np.float32)
    y = b.activation((2, 8), "float32")
    b.op("FLOOR_MOD", [x, b.const(divisors)], [y])
    b.output(y)
    values = np.array([[3.0, 3.0, -1.0, -1.0, 4.5, -4.5, -2.1, 2.1]] * 2, np.float32)
    values[1] *= -1
    assert_matches_tflm(b.tflite(), inputs=[[values]])


@pytest.mark.parametrize("operand", [0, 1])
def test_floor_mod_in_place_matches_tflm(operand: int) -> None:
    """ADD -> FLOOR_MOD -> ADD: the FLOOR_MOD output takes the bytes of the sum that dies there."""
    b = GraphBuilder()
    x = b.input((1, 4, 4, 8), "float32")
    shift = b.const(np.full((1, 1, 1, 8), 0.5, np.float32))
    divisor = b.const(np.linspace(-2.0, 2.5, 8, dtype=np.float32).reshape(1, 1, 1, 8))
    a = b.activation((1, 4, 4, 8), "float32")
    b.op("ADD", [x, shift], [a])
    m = b.activation((1, 4, 4, 8), "float32")
    b.op("FLOOR_MOD", [a, divisor] if operand == 0 else [divisor, a], [m])
    y = b.activation((1, 4, 4, 8), "float32")
    b.op("ADD", [m, shift], [y])
    b.output(y)
    model = b.tflite()
    plan = generate_optimized(import_model(model, source="test"), rewrites=False).plan
    shared = {t for buf in plan.buffers for t, _ in buf.members if t != buf.tensor}
    assert m in shared
    assert_matches_tflm(model, generate_fn=generate_optimized)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int16"])
def test_floor_mod_rejects_integer_types(dtype: str) -> None:
    model = binary_model("FLOOR_MOD", dtype, Operand((4,)), Operand((4,)))
    with pytest.raises(UnsupportedError, match="FLOOR_MOD"):
        lower_only(model)
