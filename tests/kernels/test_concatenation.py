"""CONCATENATION against TFLM: int8 (shared quantization), float32, int32 with constant inputs."""

from typing import Any

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

Q: dict[str, Any] = {"scale": 0.07, "zero_point": -5}


def concat_model(shapes: list[tuple], axis: int, dtype: str) -> bytes:
    rank = len(shapes[0])
    pos = axis + rank if axis < 0 else axis
    out_shape = list(shapes[0])
    out_shape[pos] = sum(s[pos] for s in shapes)
    q = Q if dtype == "int8" else {}
    b = GraphBuilder()
    xs = [b.input(s, dtype, **q) for s in shapes]
    y = b.activation(tuple(out_shape), dtype, **q)
    b.op("CONCATENATION", xs, [y], axis=axis, fused_activation_function=0)
    b.output(y)
    return b.tflite()


CASES = [
    ([(1, 3, 3, 5), (1, 3, 3, 7)], 3),
    ([(1, 3, 3, 5), (1, 3, 3, 7)], -1),
    ([(2, 3, 4), (2, 1, 4), (2, 5, 4)], 1),
    ([(3, 2), (1, 2)], 0),
    ([(1, 2, 5, 3), (1, 2, 1, 3), (1, 2, 2, 3), (1, 2, 7, 3)], -2),
    ([(4, 3)], 1),
]


@pytest.mark.parametrize("dtype", ["int8", "float32", "int32"])
@pytest.mark.parametrize(("shapes", "axis"), CASES)
def test_concatenation(dtype: str, shapes: list[tuple], axis: int) -> None:
    assert_matches_tflm(concat_model(shapes, axis, dtype), samples=2)


def test_concatenation_ten_inputs_int16() -> None:
    b = GraphBuilder()
    xs = [b.input((2, 1 + i % 3), "int16", scale=0.01, zero_point=0) for i in range(10)]
    y = b.activation((2, sum(1 + i % 3 for i in range(10))), "int16", scale=0.01, zero_point=0)
    b.op("CONCATENATION", xs, [y], axis=1)
    b.output(y)
    assert_matches_tflm(b.tflite(), samples=2)


def test_concatenation_constant_int32_inputs() -> None:
    """The audio preprocessor pattern: constant padding around a computed int32 vector."""
    b = GraphBuilder()
    x = b.input((11,), "int32")
    head = b.const(np.zeros(5, np.int32))
    tail = b.const(np.arange(4, dtype=np.int32) * 1000 - 7)
    y = b.activation((20,), "int32")
    b.op("CONCATENATION", [head, x, tail], [y], axis=0)
    b.output(y)
    assert_matches_tflm(b.tflite(), samples=2)


def _lower_op(b: GraphBuilder) -> None:
    g = b.graph()
    lower(g, g.operators[0])


def test_concatenation_rejects_int8_rescaling() -> None:
    """TFLM's Prepare requires int8 inputs to share the output's scale and zero point."""
    other: list[dict[str, Any]] = [
        {"scale": 0.08, "zero_point": -5},
        {"scale": 0.07, "zero_point": 4},
    ]
    for q in other:
        b = GraphBuilder()
        x0 = b.input((2, 3), "int8", **Q)
        x1 = b.input((2, 3), "int8", **q)
        y = b.activation((2, 6), "int8", **Q)
        b.op("CONCATENATION", [x0, x1], [y], axis=1)
        with pytest.raises(UnsupportedError, match=r"operator 0 \(CONCATENATION\).*requantize"):
            _lower_op(b)


def test_concatenation_rejects_activation_and_too_many_inputs() -> None:
    b = GraphBuilder()
    xs = [b.input((1, 2), "float32") for _ in range(2)]
    y = b.activation((1, 4), "float32")
    b.op("CONCATENATION", xs, [y], axis=1, fused_activation_function=1)
    with pytest.raises(UnsupportedError, match=r"operator 0 \(CONCATENATION\).*activation"):
        _lower_op(b)
    b = GraphBuilder()
    xs = [b.input((1, 1), "float32") for _ in range(11)]
    y = b.activation((1, 11), "float32")
    b.op("CONCATENATION", xs, [y], axis=1)
    with pytest.raises(UnsupportedError, match=r"operator 0 \(CONCATENATION\).*11 inputs"):
        _lower_op(b)
