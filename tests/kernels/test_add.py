"""ADD against TFLM: int8 bit-exact (left_shift 20 scheme, broadcasting, fused activations),
float32 close. Also the model builder shared by the other binary-operator tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from support import assert_matches_tflm

NONE, RELU, RELU_N1_TO_1, RELU6, TANH = 0, 1, 2, 3, 4
Quant = tuple[float, int]


@dataclass(frozen=True)
class Operand:
    """One input of a binary op: its shape, quantization (int8 only), and whether it is constant."""

    shape: tuple[int, ...]
    quant: Quant = (0.05, 0)
    const: bool = False


def binary_model(
    opcode: str,
    dtype: str,
    a: Operand,
    b: Operand,
    out_quant: Quant = (0.1, 0),
    *,
    seed: int = 0,
    **options: Any,
) -> bytes:
    """A one-operator model `opcode(a, b)`; constant operands get seeded random data."""
    rng = np.random.default_rng(seed)
    builder = GraphBuilder()
    ids = [_operand(builder, rng, dtype, x) for x in (a, b)]
    shape = tuple(int(d) for d in np.broadcast_shapes(a.shape, b.shape))
    scale, zp = out_quant if dtype != "float32" else (None, None)
    y = builder.activation(shape, dtype, scale=scale, zero_point=zp)
    builder.op(opcode, ids, [y], **options)
    builder.output(y)
    return builder.tflite()


def _operand(builder: GraphBuilder, rng: np.random.Generator, dtype: str, x: Operand) -> int:
    scale, zp = x.quant if dtype != "float32" else (None, None)
    if not x.const:
        return builder.input(x.shape, dtype, scale=scale, zero_point=zp)
    if dtype == "float32":
        data = rng.standard_normal(x.shape).astype(np.float32)
    else:
        info = np.iinfo(np.dtype(dtype))
        data = rng.integers(info.min, int(info.max) + 1, x.shape).astype(dtype)
    return builder.const(np.asarray(data), scale=scale, zero_point=zp)


def lower_only(model: bytes) -> None:
    """Run mcugen's lowering on every operator (raises UnsupportedError for rejected ones)."""
    graph = import_model(model, source="test model")
    for op in graph.operators:
        lower(graph, op)


BROADCASTS = {
    "same": (Operand((1, 8, 8, 16)), Operand((1, 8, 8, 16), (0.07, 5))),
    "channel_const": (Operand((1, 8, 8, 16)), Operand((1, 1, 1, 16), (0.02, -3), const=True)),
    "spatial": (Operand((1, 8, 8, 16)), Operand((1, 8, 8, 1), (0.09, 11))),
    "scalar_const": (Operand((1, 5, 7, 3)), Operand((), (0.03, 2), const=True)),
    "first_broadcasts": (Operand((1, 1, 1, 9), (0.2, -7), const=True), Operand((2, 3, 5, 9))),
    "both_broadcast": (Operand((1, 5, 1, 3)), Operand((4, 1, 6, 1), (0.04, 9))),
    "rank_mismatch": (Operand((2, 3, 5, 7)), Operand((3, 1, 7), (0.06, -20))),
    "rank5": (Operand((2, 1, 3, 4, 5)), Operand((2, 2, 1, 4, 1), (0.05, 1))),
    "rank6": (Operand((2, 1, 2, 3, 1, 3)), Operand((1, 3, 1, 3, 2, 1), (0.08, -1))),
    "flat": (Operand((37,)), Operand((37,), (0.01, 0))),
}


@pytest.mark.parametrize("case", sorted(BROADCASTS))
def test_add_int8_broadcasts(case: str) -> None:
    a, b = BROADCASTS[case]
    assert_matches_tflm(binary_model("ADD", "int8", a, b, (0.11, -4)))


@pytest.mark.parametrize("act", [NONE, RELU, RELU6, RELU_N1_TO_1])
def test_add_int8_activations(act: int) -> None:
    a, b = Operand((1, 6, 6, 8), (0.05, -10)), Operand((1, 1, 1, 8), (0.03, 4), const=True)
    assert_matches_tflm(
        binary_model("ADD", "int8", a, b, (0.06, -30), fused_activation_function=act)
    )


@pytest.mark.parametrize("scales", [(0.05, 0.05, 0.05), (0.5, 0.001, 0.02), (0.001, 0.4, 0.9)])
def test_add_int8_scales(scales: tuple[float, float, float]) -> None:
    a, b = Operand((3, 17), (scales[0], 3)), Operand((3, 17), (scales[1], -128))
    assert_matches_tflm(binary_model("ADD", "int8", a, b, (scales[2], 127)))


# Float shapes kept small: float32 only needs to be close, a few hundred elements suffice.
FLOAT_BROADCASTS = {
    "same": (Operand((1, 3, 4, 5)), Operand((1, 3, 4, 5))),
    "channel_const": (Operand((1, 4, 3, 6)), Operand((1, 1, 1, 6), const=True)),
    "spatial": (Operand((1, 4, 3, 6)), Operand((1, 4, 3, 1))),
    "both_broadcast": (Operand((1, 5, 1, 3)), Operand((2, 1, 4, 1))),
    "rank6": (Operand((2, 1, 2, 3, 1, 3)), Operand((1, 3, 1, 3, 2, 1))),
    "scalar_const": (Operand((2, 7)), Operand((), const=True)),
}


@pytest.mark.parametrize("case", sorted(FLOAT_BROADCASTS))
@pytest.mark.parametrize("act", [NONE, RELU6])
def test_add_float32(case: str, act: int) -> None:
    a, b = FLOAT_BROADCASTS[case]
    assert_matches_tflm(binary_model("ADD", "float32", a, b, fused_activation_function=act))


def test_add_rejects_int16() -> None:
    model = binary_model("ADD", "int16", Operand((4,), (0.1, 0)), Operand((4,), (0.1, 0)))
    with pytest.raises(UnsupportedError, match="ADD"):
        lower_only(model)


def test_add_rejects_tanh_activation() -> None:
    model = binary_model(
        "ADD", "int8", Operand((4,)), Operand((4,)), fused_activation_function=TANH
    )
    with pytest.raises(UnsupportedError, match="ADD"):
        lower_only(model)


def test_add_rejects_output_scale_tflm_aborts_on() -> None:
    """TFLM's QuantizeMultiplierSmallerThanOneExp aborts when the output rescale is >= 1."""
    model = binary_model("ADD", "int8", Operand((4,), (0.5, 0)), Operand((4,)), (1e-7, 0))
    with pytest.raises(UnsupportedError, match="ADD"):
        lower_only(model)
