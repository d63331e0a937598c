"""PAD and PADV2 against TFLM: int8, int16, int32 identical, float32 close."""

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import assert_matches_tflm

QUANT = {"int8": (0.05, -3), "int16": (0.001, 0), "int32": (None, None), "float32": (None, None)}
NP = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "float32": np.float32}


def pad_model(
    dtype: str,
    shape: tuple[int, ...],
    pads: list[tuple[int, int]],
    value: float | None = None,
    opcode: str = "PAD",
    pad_dtype: type = np.int32,
) -> bytes:
    scale, zp = QUANT[dtype]
    out_shape = tuple(d + lo + hi for d, (lo, hi) in zip(shape, pads, strict=True))
    b = GraphBuilder()
    x = b.input(shape, dtype, scale=scale, zero_point=zp)
    inputs = [x, b.const(np.array(pads, dtype=pad_dtype))]
    if value is not None:
        inputs.append(
            b.const(np.array([value], dtype=NP[dtype]).reshape(()), scale=scale, zero_point=zp)
        )
    y = b.activation(out_shape, dtype, scale=scale, zero_point=zp)
    b.op(opcode, inputs, [y])
    b.output(y)
    return b.tflite()


CASES = [
    ((1, 7, 9, 3), [(0, 0), (1, 1), (1, 1), (0, 0)]),  # image-style, as before a VALID conv
    ((1, 6, 5, 4), [(0, 0), (0, 1), (2, 0), (0, 0)]),  # asymmetric, as TF's SAME with stride 2
    ((2, 3, 4, 3), [(1, 0), (0, 2), (3, 1), (1, 2)]),  # every dimension, channels included
    ((5, 3), [(2, 1), (0, 3)]),
    ((2, 3, 2, 2, 3), [(0, 1), (1, 0), (0, 0), (2, 1), (1, 1)]),  # 5D
]


@pytest.mark.parametrize("dtype", ["int8", "float32", "int16", "int32"])
@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_pad_matches_tflm(dtype: str, case: tuple) -> None:
    assert_matches_tflm(pad_model(dtype, *case))


@pytest.mark.parametrize(
    ("dtype", "value"),
    [("int8", 17), ("int8", -128), ("float32", -1.5), ("int16", -300), ("int32", 123456)],
)
def test_padv2_constant_value(dtype: str, value: float) -> None:
    shape, pads = CASES[2]
    assert_matches_tflm(pad_model(dtype, shape, pads, value=value, opcode="PADV2"))


def test_padv2_without_value_pads_like_pad() -> None:
    assert_matches_tflm(pad_model("int8", *CASES[0], opcode="PADV2"))


def rejected(model: bytes, opcode: str) -> None:
    with pytest.raises(UnsupportedError, match=opcode):
        generate(import_model(model, source="test model"))


def test_pad_rejects_int64_paddings() -> None:
    rejected(pad_model("int8", *CASES[0], pad_dtype=np.int64), "PAD")


def test_pad_rejects_negative_paddings() -> None:
    rejected(pad_model("float32", (1, 6, 6, 2), [(0, 0), (-1, 0), (0, 0), (0, 0)]), "PAD")


def test_padv2_rejects_value_with_other_quantization() -> None:
    b = GraphBuilder()
    x = b.input((1, 4, 4, 2), "int8", scale=0.05, zero_point=-3)
    pads = b.const(np.array([(0, 0), (1, 1), (1, 1), (0, 0)], dtype=np.int32))
    v = b.const(np.array(5, dtype=np.int8), scale=0.1, zero_point=-3)
    y = b.activation((1, 6, 6, 2), "int8", scale=0.05, zero_point=-3)
    b.op("PADV2", [x, pads, v], [y])
    b.output(y)
    rejected(b.tflite(), "PADV2")
