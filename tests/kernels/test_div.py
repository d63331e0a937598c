"""DIV (int32) against TFLM: truncating division of signed values, numpy broadcasting, fused
activations; a constant zero divisor and quantized operands are rejected, a computed zero fails
at run time (TFLM traps)."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from mcugen.model.builder import GraphBuilder
from support import RELU, RELU6, RELU_N1_TO_1, assert_matches_tflm, lower_only


def div_model(a_shape: tuple[int, ...], b: tuple[int, ...] | np.ndarray, act: int = 0) -> bytes:
    g = GraphBuilder()
    x = g.input(a_shape, "int32")
    d = g.const(b) if isinstance(b, np.ndarray) else g.input(b, "int32")
    shape = np.broadcast_shapes(a_shape, b.shape if isinstance(b, np.ndarray) else b)
    y = g.activation(shape, "int32")
    g.op("DIV", [x, d], [y], fused_activation_function=act)
    g.output(y)
    return g.tflite()


def nonzero(rng: np.random.Generator, shape: tuple[int, ...], high: int) -> np.ndarray:
    v = rng.integers(-high, high, shape).astype(np.int32)
    return np.where(v == 0, 1, v).astype(np.int32)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((40,), (40,)), ((2, 3, 4), (4,)), ((5, 1), (1, 6)), ((7,), ())]
)
@pytest.mark.parametrize("act", [0, RELU, RELU6, RELU_N1_TO_1])
def test_div_matches_tflm(a_shape: tuple[int, ...], b_shape: tuple[int, ...], act: int) -> None:
    rng = np.random.default_rng(len(a_shape) + act)
    inputs = [
        [rng.integers(-(2**31), 2**31, a_shape).astype(np.int32), nonzero(rng, b_shape, high)]
        for high in (2**31, 1000, 3)
    ]
    assert_matches_tflm(div_model(a_shape, b_shape, act), inputs=inputs)


def test_div_by_a_constant_matches_tflm() -> None:
    """The audio front end's (x + 333) / 666 shape: a scalar constant divisor."""
    assert_matches_tflm(div_model((40,), np.array(666, np.int32)), samples=3)


def test_div_rejects_a_constant_zero_divisor_and_quantized_operands() -> None:
    with pytest.raises(McugenError, match="zero"):
        lower_only(div_model((4,), np.array([1, 2, 0, 3], np.int32)))
    g = GraphBuilder()
    x, d = g.input((4,), "int32", scale=0.5, zero_point=0), g.input((4,), "int32")
    y = g.activation((4,), "int32")
    g.op("DIV", [x, d], [y])
    g.output(y)
    with pytest.raises(McugenError, match="quantized"):
        lower_only(g.tflite())
