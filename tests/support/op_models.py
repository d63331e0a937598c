"""One-operator models for the kernel tests (kernels/): binary and unary operators,
their broadcasts, and custom operators with FlexBuffer options."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from flatbuffers import flexbuffers
from hypothesis import strategies as st

from mcugen.codegen.lower import lower
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model

# --- One-operator models (kernels/) ------------------------------------------------------------

#: TFLite's fused activation functions and paddings, as stored in operator options.
NONE, RELU, RELU_N1_TO_1, RELU6, TANH = 0, 1, 2, 3, 4
SAME, VALID = 0, 1
Quant = tuple[float, int]


def window_options(
    padding: int, stride: tuple[int, int], dilation: tuple[int, int], act: int, **extra: int
) -> dict[str, int]:
    """A convolution window's operator options, `extra` (a depth multiplier) before the
    activation (the order the model's bytes keep)."""
    return {
        "padding": padding,
        "stride_h": stride[0],
        "stride_w": stride[1],
        "dilation_h_factor": dilation[0],
        "dilation_w_factor": dilation[1],
        **extra,
        "fused_activation_function": act,
    }


#: Types whose operands `binary_model` quantizes (int32 and float32 operands carry none).
QUANTIZED = ("int8", "int16")


@dataclass(frozen=True)
class Operand:
    """One input of a binary op: its shape, quantization (int8 and int16 only), and whether it is
    constant."""

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
    scale, zp = out_quant if dtype in QUANTIZED else (None, None)
    y = builder.activation(shape, dtype, scale=scale, zero_point=zp)
    builder.op(opcode, ids, [y], **options)
    builder.output(y)
    return builder.tflite()


def add_chain(
    shape: tuple[int, ...], scales: Sequence[float], zps: Sequence[int], act: int
) -> bytes:
    """k int8 ADDs in a chain over k + 1 inputs: h1 = x0 + x1, h2 = h1 + x2, ... (each ADD may
    write over the sum before it, which dies there); `scales` and `zps` give the inputs', then
    the sums' quantisation (2k + 1 each)."""
    k = len(scales) // 2
    b = GraphBuilder()
    xs = [b.input(shape, "int8", scale=scales[i], zero_point=zps[i]) for i in range(k + 1)]
    h = xs[0]
    for i in range(1, k + 1):
        y = b.activation(shape, "int8", scale=scales[k + i], zero_point=zps[k + i])
        b.op("ADD", [h, xs[i]], [y], fused_activation_function=act)
        h = y
    b.output(h)
    return b.tflite()


@st.composite
def add_chains(draw: st.DrawFn, adds: int, max_dim: int, scales: tuple[float, float]) -> bytes:
    """`add_chain` models of `adds` ADDs: shapes of 1 to 4 dimensions up to `max_dim`, scales in
    the range `scales`, any zero points, no activation, ReLU or ReLU6."""
    n = 2 * adds + 1
    shape = draw(st.lists(st.integers(1, max_dim), min_size=1, max_size=4).map(tuple))
    q_scales = draw(st.tuples(*[st.floats(*scales) for _ in range(n)]))
    zps = draw(st.tuples(*[st.integers(-128, 127) for _ in range(n)]))
    return add_chain(shape, q_scales, zps, draw(st.sampled_from([0, 1, 3])))


def _operand(builder: GraphBuilder, rng: np.random.Generator, dtype: str, x: Operand) -> int:
    scale, zp = x.quant if dtype in QUANTIZED else (None, None)
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


def unary_model(
    opcode: str,
    dtype: str,
    shape: tuple[int, ...],
    in_quant: Quant | None = None,
    out_quant: Quant | None = None,
    **options: Any,
) -> bytes:
    """A one-operator model `opcode(x)`; quantizations are (scale, zero point) or None."""
    b = GraphBuilder()
    iq, oq = in_quant or (None, None), out_quant or (None, None)
    x = b.input(shape, dtype, scale=iq[0], zero_point=iq[1])
    y = b.activation(shape, dtype, scale=oq[0], zero_point=oq[1])
    b.op(opcode, [x], [y], **options)
    b.output(y)
    return b.tflite()


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


def symmetric(x: Operand) -> Operand:
    """The operand with zero point 0, as TFLM's int16 kernels require."""
    return Operand(x.shape, (x.quant[0], 0), x.const)


#: The same broadcasts for int16 operands (zero points 0).
INT16_BROADCASTS = {k: (symmetric(a), symmetric(b)) for k, (a, b) in BROADCASTS.items()}

# Float shapes kept small: float32 only needs to be close, a few hundred elements suffice.
FLOAT_BROADCASTS = {
    "same": (Operand((1, 3, 4, 5)), Operand((1, 3, 4, 5))),
    "channel_const": (Operand((1, 4, 3, 6)), Operand((1, 1, 1, 6), const=True)),
    "spatial": (Operand((1, 4, 3, 6)), Operand((1, 4, 3, 1))),
    "both_broadcast": (Operand((1, 5, 1, 3)), Operand((2, 1, 4, 1))),
    "rank6": (Operand((2, 1, 2, 3, 1, 3)), Operand((1, 3, 1, 3, 2, 1))),
    "scalar_const": (Operand((2, 7)), Operand((), const=True)),
}


def flex_options(**options: int | bool) -> bytes:
    """A custom operator's options as the FlexBuffer map TFLM's signal library reads (keys sorted
    by the builder, values by position)."""
    return bytes(flexbuffers.Dumps(options))


def floor_model(folder: Path) -> Path:
    """floor.tflite in `folder`: one float32 FLOOR, an operator mcugen does not support."""
    b = GraphBuilder()
    x = b.input((1, 4), "float32")
    y = b.activation((1, 4), "float32")
    b.op("FLOOR", [x], [y])
    b.output(y)
    path = folder / "floor.tflite"
    path.write_bytes(b.tflite())
    return path


def custom_model(
    code: str,
    inputs: Sequence[tuple[Sequence[int], str] | np.ndarray],
    outputs: Sequence[tuple[Sequence[int], str]],
    options: bytes,
) -> bytes:
    """A one-operator model of custom operator `code`: each input a (shape, dtype) model input or
    a constant array; every output is a model output."""
    b = GraphBuilder()
    ids = [b.const(x) if isinstance(x, np.ndarray) else b.input(x[0], x[1]) for x in inputs]
    outs = [b.activation(shape, dtype) for shape, dtype in outputs]
    b.custom(code, ids, outs, options)
    b.output(*outs)
    return b.tflite()


# --- FULLY_CONNECTED models (the int8 variants' tests) ----------------------------------------


def fc_model(
    batch: int, depth: int, units: int, act: int, per_channel: bool, zp: int, seed: int
) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((batch, depth), "int8", scale=0.05, zero_point=zp)
    scales = rng.uniform(0.005, 0.03, units) if per_channel else 0.02
    w = b.const(rng.integers(-127, 128, (units, depth), dtype=np.int8), scale=scales, axis=0)
    bias_scale = 0.05 * np.atleast_1d(scales) * np.ones(units)
    bias = b.const(rng.integers(-900, 900, units, dtype=np.int32), scale=bias_scale)
    y = b.activation((batch, units), "int8", scale=0.4, zero_point=-4)
    b.op("FULLY_CONNECTED", [x, w, bias], [y], fused_activation_function=act)
    b.output(y)
    return b.tflite()


@st.composite
def fc_models(draw: st.DrawFn, units: int = 9) -> bytes:
    """Random int8 FULLY_CONNECTED models (`fc_model`): batches of 1 to 3 rows, depths 1 to 41
    and 1 to `units` output channels, activations none, ReLU and ReLU6, either weights' scales."""
    return fc_model(
        draw(st.integers(1, 3)),
        draw(st.integers(1, 41)),
        draw(st.integers(1, units)),
        draw(st.sampled_from([0, 1, 3])),
        draw(st.booleans()),
        draw(st.integers(-128, 127)),
        draw(st.integers(0, 1000)),
    )
