"""TRANSPOSE against TFLM: ranks 1 to 5, the NCHW->NHWC inputs of real models, 3 types."""

from typing import Any

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

Q: dict[str, dict[str, Any]] = {
    "int8": {"scale": 0.02, "zero_point": -1},
    "int16": {"scale": 0.001, "zero_point": 0},
}


def transpose_model(shape: tuple, perm: tuple, dtype: str) -> bytes:
    q = Q.get(dtype, {})
    b = GraphBuilder()
    x = b.input(shape, dtype, **q)
    y = b.activation(tuple(shape[a] for a in perm), dtype, **q)
    b.op("TRANSPOSE", [x, b.const(np.array(perm, np.int32))], [y])
    b.output(y)
    return b.tflite()


CASES = [
    ((1, 3, 8, 7), (0, 2, 3, 1)),  # mobilenet_v2: NCHW -> NHWC
    ((1, 16, 12, 1), (0, 2, 1, 3)),  # yamnet
    ((1, 3, 3, 10), (0, 3, 1, 2)),  # mcunet: NHWC -> NCHW
    ((5, 7), (1, 0)),
    ((9,), (0,)),
    ((2, 3, 4), (2, 0, 1)),
    ((2, 3, 4), (1, 2, 0)),
    ((2, 3, 1, 4, 5), (4, 2, 0, 3, 1)),
    ((3, 2, 2, 3, 2), (0, 1, 2, 3, 4)),
]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize(("shape", "perm"), CASES)
def test_transpose(dtype: str, shape: tuple, perm: tuple) -> None:
    assert_matches_tflm(transpose_model(shape, perm, dtype), samples=2)


@pytest.mark.parametrize(("shape", "perm"), CASES[:3])
def test_transpose_int16(shape: tuple, perm: tuple) -> None:
    assert_matches_tflm(transpose_model(shape, perm, "int16"), samples=2)


def _lower(model: GraphBuilder) -> None:
    g = model.graph()
    lower(g, g.operators[0])


def test_transpose_rejects_six_dims_and_int32() -> None:
    """TFLM's Transpose handles ranks 1 to 5 and float32/int8/int16."""
    b = GraphBuilder()
    x = b.input((1, 2, 1, 2, 1, 2), "int8", scale=0.1)
    y = b.activation((2, 1, 2, 1, 2, 1), "int8", scale=0.1)
    b.op("TRANSPOSE", [x, b.const(np.arange(6, dtype=np.int32)[::-1].copy())], [y])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(TRANSPOSE\).*rank 6"):
        _lower(b)
    b = GraphBuilder()
    x = b.input((2, 3), "int32")
    y = b.activation((3, 2), "int32")
    b.op("TRANSPOSE", [x, b.const(np.array([1, 0], np.int32))], [y])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(TRANSPOSE\).*int32"):
        _lower(b)


def test_transpose_rejects_non_constant_or_bad_perm() -> None:
    b = GraphBuilder()
    x = b.input((2, 3), "float32")
    perm = b.input((2,), "int32")
    y = b.activation((3, 2), "float32")
    b.op("TRANSPOSE", [x, perm], [y])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(TRANSPOSE\).*non-constant"):
        _lower(b)
    b = GraphBuilder()
    x = b.input((2, 2), "float32")
    y = b.activation((2, 2), "float32")
    b.op("TRANSPOSE", [x, b.const(np.array([1, 1], np.int32))], [y])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(TRANSPOSE\).*not a permutation"):
        _lower(b)
