"""AVERAGE_POOL_2D and MAX_POOL_2D against TFLM: int8 and int16 bit-exact, float32 close."""

import pytest

from mcugen.codegen import quant
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import assert_matches_tflm

SAME, VALID = 0, 1
QUANT = {"int8": (0.07, -5), "int16": (0.002, 0), "float32": (None, None)}


def pool_model(
    opcode: str,
    dtype: str,
    shape: tuple[int, int, int, int],
    filt: tuple[int, int],
    stride: tuple[int, int],
    padding: int,
    act: int = 0,
    out_quant: tuple[float, int] | None = None,
) -> bytes:
    scale, zp = QUANT[dtype]
    oscale, ozp = out_quant or (scale, zp)
    out_hw = [quant.out_size(padding, shape[1 + i], filt[i], stride[i]) for i in range(2)]
    b = GraphBuilder()
    x = b.input(shape, dtype, scale=scale, zero_point=zp)
    y = b.activation((shape[0], *out_hw, shape[3]), dtype, scale=oscale, zero_point=ozp)
    b.op(
        opcode,
        [x],
        [y],
        padding=padding,
        stride_h=stride[0],
        stride_w=stride[1],
        filter_height=filt[0],
        filter_width=filt[1],
        fused_activation_function=act,
    )
    b.output(y)
    return b.tflite()


# (input shape, filter, stride, padding, fused activation)
CASES = [
    ((1, 9, 7, 5), (3, 3), (2, 2), SAME, 0),
    ((1, 9, 7, 5), (2, 3), (1, 2), VALID, 0),
    ((2, 8, 8, 3), (2, 2), (2, 2), VALID, 1),
    ((1, 10, 11, 4), (3, 2), (3, 1), SAME, 3),
    ((1, 6, 5, 2), (5, 5), (1, 1), SAME, 2),
    ((1, 25, 5, 16), (25, 5), (1, 1), VALID, 0),  # global pooling, as in the KWS DS-CNN
]


@pytest.mark.parametrize("opcode", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_pool_int8_bit_exact(opcode: str, case: tuple) -> None:
    assert_matches_tflm(pool_model(opcode, "int8", *case))


@pytest.mark.parametrize("opcode", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("case", CASES[:4], ids=[f"case{i}" for i in range(4)])
def test_pool_float32_close(opcode: str, case: tuple) -> None:
    assert_matches_tflm(pool_model(opcode, "float32", *case))


@pytest.mark.parametrize("opcode", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool_int16_bit_exact(opcode: str) -> None:
    assert_matches_tflm(pool_model(opcode, "int16", (1, 9, 7, 5), (3, 3), (2, 2), SAME, 1))


@pytest.mark.parametrize("opcode", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool_rejects_requantization(opcode: str) -> None:
    model = pool_model(opcode, "int8", (1, 8, 8, 3), (2, 2), (2, 2), VALID, out_quant=(0.1, -5))
    with pytest.raises(UnsupportedError, match=opcode):
        generate(import_model(model, source="test model"))


def test_pool_rejects_tanh_activation() -> None:
    model = pool_model("MAX_POOL_2D", "int8", (1, 8, 8, 3), (2, 2), (2, 2), VALID, act=4)
    with pytest.raises(UnsupportedError, match="MAX_POOL_2D"):
        generate(import_model(model, source="test model"))
