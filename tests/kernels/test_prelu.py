"""PRELU against TFLM: int8 bit-exact (alpha broadcast, identity and alpha multipliers), float32."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import Operand, assert_matches_tflm, binary_model, lower_only

ALPHAS = {
    "per_channel_alpha": ((1, 6, 5, 8), (1, 1, 8)),  # Keras PReLU(shared_axes=[1, 2])
    "full_alpha": ((1, 4, 3, 5), (4, 3, 5)),
    "single_alpha": ((2, 3, 7), (1,)),
    "scalar_alpha": ((3, 9), ()),
    "alpha_same_rank": ((1, 3, 3, 4), (1, 1, 1, 4)),
    "flat": ((23,), (23,)),
}


@pytest.mark.parametrize("case", sorted(ALPHAS))
def test_prelu_int8_alpha_shapes(case: str) -> None:
    x_shape, a_shape = ALPHAS[case]
    x, alpha = Operand(x_shape, (0.04, 7)), Operand(a_shape, (0.003, -5), const=True)
    assert_matches_tflm(binary_model("PRELU", "int8", x, alpha, (0.03, -60)))


@pytest.mark.parametrize(
    "quants",
    [
        ((0.1, -128), (0.01, 0), (0.1, -128)),  # alpha in [-1.28, 1.27], output = input scale
        ((0.02, 20), (0.5, 100), (0.3, 0)),  # large alphas
        ((0.5, 0), (0.001, -20), (0.002, 10)),  # identity multiplier far above one
    ],
)
def test_prelu_int8_quantizations(quants: tuple[tuple[float, int], ...]) -> None:
    x, alpha = Operand((2, 4, 4, 3), quants[0]), Operand((1, 1, 3), quants[1], const=True)
    assert_matches_tflm(binary_model("PRELU", "int8", x, alpha, quants[2]))


def test_prelu_int8_alpha_as_input() -> None:
    """TFLM does not require a constant alpha; a runtime alpha works the same way."""
    x, alpha = Operand((1, 5, 5, 4), (0.05, 3)), Operand((1, 1, 4), (0.01, 2))
    assert_matches_tflm(binary_model("PRELU", "int8", x, alpha, (0.04, -10)))


@pytest.mark.parametrize("case", ["per_channel_alpha", "full_alpha", "single_alpha"])
def test_prelu_float32(case: str) -> None:
    x_shape, a_shape = ALPHAS[case]
    x, alpha = Operand(x_shape), Operand(a_shape, const=True)
    assert_matches_tflm(binary_model("PRELU", "float32", x, alpha))


def test_prelu_rejects_float32_rank5() -> None:
    x, alpha = Operand((1, 2, 2, 2, 3)), Operand((3,), const=True)
    with pytest.raises(UnsupportedError, match="PRELU"):
        lower_only(binary_model("PRELU", "float32", x, alpha))


def test_prelu_rejects_per_channel_alpha_quantization() -> None:
    b = GraphBuilder()
    x = b.input((1, 2, 2, 3), "int8", scale=0.1, zero_point=0)
    alpha = b.const(np.array([1, 2, 3], dtype=np.int8), scale=[0.1, 0.2, 0.3], zero_point=0)
    y = b.activation((1, 2, 2, 3), "int8", scale=0.1, zero_point=0)
    b.op("PRELU", [x, alpha], [y])
    b.output(y)
    with pytest.raises(UnsupportedError, match="PRELU"):
        lower_only(b.tflite())
