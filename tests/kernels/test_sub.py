"""SUB against TFLM: int8 bit-exact (rescale factors, broadcasting, fused activations), float32
close."""

from __future__ import annotations

import pytest

from mcugen.errors import UnsupportedError
from support import (
    Operand,
    assert_matches_tflm,
    binary_model,
    lower_only,
)

SCALES = [
    (0.2563990, 0.4752814, 0.0729356),
    (0.4743761, 0.1566039, 0.2122399),
    (0.003, 0.003, 0.006),
    (0.9, 0.0011, 0.02),
]


@pytest.mark.parametrize("scales", SCALES)
def test_sub_int8_scales(scales: tuple[float, float, float]) -> None:
    a, b = Operand((4, 63), (scales[0], -1)), Operand((4, 63), (scales[1], 0))
    assert_matches_tflm(binary_model("SUB", "int8", a, b, (scales[2], 2)), samples=8)


def test_sub_rejects_mixed_types() -> None:
    from mcugen.model.builder import GraphBuilder

    b = GraphBuilder()
    x = b.input((4,), "int8", scale=0.1, zero_point=0)
    w = b.input((4,), "float32")
    y = b.activation((4,), "int8", scale=0.1, zero_point=0)
    b.op("SUB", [x, w], [y])
    b.output(y)
    with pytest.raises(UnsupportedError, match="SUB"):
        lower_only(b.tflite())


def test_sub_int8_double_rescale_factors() -> None:
    """TFLM's sub_common.cc source computes the rescale factors in float32, but the pip
    interpreter's binary widens to double (like ADD): with these scales, float32 factors would
    turn -30 - -80 into 75 and 30 - 80 into -75, double factors give TFLM's 74 and -74."""
    import numpy as np

    scales = (0.3424184024333954, 0.23244835436344147, 0.11172238737344742)
    a_in, b_in = Operand((4,), (scales[0], 0)), Operand((4,), (scales[1], 0))
    model = binary_model("SUB", "int8", a_in, b_in, (scales[2], 0))
    a = np.array([-30, 30, 0, 127], dtype=np.int8)
    b = np.array([-80, 80, 0, -128], dtype=np.int8)
    assert_matches_tflm(model, inputs=[[a, b]])
