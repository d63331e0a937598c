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


@pytest.mark.parametrize(
    ("in_shape", "out_shape", "dtype", "perm", "match"),
    [
        # TFLM's Transpose handles ranks 1 to 5 and float32/int8/int16
        ((1, 2, 1, 2, 1, 2), (2, 1, 2, 1, 2, 1), "int8", [5, 4, 3, 2, 1, 0], "rank 6"),
        ((2, 3), (3, 2), "int32", [1, 0], "int32"),
        ((2, 3), (3, 2), "float32", None, "non-constant"),  # the permutation a model input
        ((2, 2), (2, 2), "float32", [1, 1], "not a permutation"),
    ],
)
def test_transpose_rejects(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    dtype: str,
    perm: list[int] | None,
    match: str,
) -> None:
    quant: dict[str, Any] = {"scale": 0.1} if dtype == "int8" else {}
    b = GraphBuilder()
    x = b.input(in_shape, dtype, **quant)
    p = b.input((2,), "int32") if perm is None else b.const(np.array(perm, np.int32))
    y = b.activation(out_shape, dtype, **quant)
    b.op("TRANSPOSE", [x, p], [y])
    with pytest.raises(UnsupportedError, match=r"operator 0 \(TRANSPOSE\).*" + match):
        _lower(b)
