"""AVERAGE_POOL_2D and MAX_POOL_2D against TFLM: int8 and int16 bit-exact (int16 with zero points,
activations and its largest window), float32 close."""

import numpy as np
import pytest

from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import assert_matches_tflm, pool_window

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
    in_quant: tuple[float, int] | None = None,
) -> bytes:
    scale, zp = in_quant or QUANT[dtype]
    oscale, ozp = out_quant or (scale, zp)
    out_hw, options = pool_window(shape, filt, stride, padding, act)
    b = GraphBuilder()
    x = b.input(shape, dtype, scale=scale, zero_point=zp)
    y = b.activation((shape[0], *out_hw, shape[3]), dtype, scale=oscale, zero_point=ozp)
    b.op(opcode, [x], [y], **options)
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
@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_pool_int16_bit_exact(opcode: str, case: tuple) -> None:
    """Full-range int16 inputs; the RELU, RELU_N1_TO_1 and RELU6 cases clamp at 0, +-500, 3000."""
    assert_matches_tflm(pool_model(opcode, "int16", *case))


#: int16 quantizations TFLM's pooling accepts: a zero point (its 16x8 convolutions need 0, pooling
#: does not), and an output scale within 1e-6 of the input's (TFLM's tolerance).
INT16_QUANT = {
    "zero_point": ((0.002, 700), None),
    "zero_point_negative": ((0.01, -1234), None),
    "scale_within_1e-6": ((0.002, 0), (0.002 + 5e-7, 0)),
}


@pytest.mark.parametrize("opcode", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("act", [0, 1, 2, 3])
@pytest.mark.parametrize("quant_name", sorted(INT16_QUANT))
def test_pool_int16_quantization(opcode: str, act: int, quant_name: str) -> None:
    in_quant, out_quant = INT16_QUANT[quant_name]
    case = ((1, 7, 6, 3), (3, 2), (2, 1), SAME, act)
    assert_matches_tflm(pool_model(opcode, "int16", *case, out_quant, in_quant))


@pytest.mark.parametrize("opcode", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool_rejects_requantization(opcode: str) -> None:
    model = pool_model(opcode, "int8", (1, 8, 8, 3), (2, 2), (2, 2), VALID, out_quant=(0.1, -5))
    with pytest.raises(UnsupportedError, match=opcode):
        generate(import_model(model, source="test model"))


def test_pool_rejects_tanh_activation() -> None:
    model = pool_model("MAX_POOL_2D", "int8", (1, 8, 8, 3), (2, 2), (2, 2), VALID, act=4)
    with pytest.raises(UnsupportedError, match="MAX_POOL_2D"):
        generate(import_model(model, source="test model"))


def test_pool_int16_rejects_requantization() -> None:
    model = pool_model(
        "AVERAGE_POOL_2D", "int16", (1, 8, 8, 3), (2, 2), (2, 2), VALID, out_quant=(0.003, 0)
    )
    with pytest.raises(UnsupportedError, match="AVERAGE_POOL_2D.*identical"):
        generate(import_model(model, source="test model"))


#: The largest int16 average window whose int32 sum (and rounding) cannot overflow: 65535 taps.
LARGEST_WINDOW = ((1, 255, 257, 1), (255, 257), (1, 1), VALID)


@pytest.mark.parametrize("value", [-32768, 32767, 1])
def test_pool_int16_largest_window_bit_exact(value: int) -> None:
    """Every tap at the extreme: the sum reaches -2^31 + 32768 (or 2^31 - 65535) exactly."""
    model = pool_model("AVERAGE_POOL_2D", "int16", *LARGEST_WINDOW)
    inputs = [[np.full(LARGEST_WINDOW[0], value, np.int16)]]
    assert_matches_tflm(model, inputs=inputs)


def test_pool_int16_rejects_window_one_tap_larger() -> None:
    model = pool_model("AVERAGE_POOL_2D", "int16", (1, 256, 256, 1), (256, 256), (1, 1), VALID)
    with pytest.raises(UnsupportedError, match="AVERAGE_POOL_2D.*65536 int16 values overflows"):
        generate(import_model(model, source="test model"))
