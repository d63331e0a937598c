"""Mutants of .tflite models for benchmarks/fuzz.py: byte-level, field patches and structure-aware.

Seeds: every model in ../shared/models (when present), the bundled example, two generated irregular
graphs and three small models written here that cover the operators the others lack.
Mutations, one to three per mutant, all of one family:
- bytes: bit flips, interesting bytes and 32-bit words, inserted, deleted or duplicated runs,
  truncation (offsets then point anywhere);
- fields: a field found with the flatbuffer accessors (tensor buffer and type, shape entries,
  scales, zero points, quantized dimension, operator opcode index and operands, subgraph inputs and
  outputs, vector lengths) overwritten in place with an interesting value;
- graph: the seed imported, its Graph IR changed (shapes with or without matching data, types,
  operands out of range or dropped, cycles, constants as graph inputs, scales and zero points,
  options, opcodes, weights and biases) and written back with mcugen's own writer.
A mutant is a pure function of (seed models, run seed, index): one index reproduces it.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import tflite

from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import DTYPES, Graph, Operator, Quantization, Tensor
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from testgraphs import nas_cells, unet

ROOT = Path(__file__).resolve().parents[1]
SHARED_MODELS = ROOT.parent / "shared" / "models"

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
WORDS = (0, 1, 2, 3, 4, 7, 8, 16, 255, 256, 4096, 65535, 65536, INT32_MAX, INT32_MIN, -1, -2)
DIMS = (0, 1, 2, 3, 5, 7, 16, 255, 4096, 65536, 2**24, 2**30, INT32_MAX)
SCALES = (0.0, -0.5, math.nan, math.inf, -math.inf, 1e-45, 1e-38, 1e-30, 1e-10, 2.0**-31,
          1e-3, 0.5, 1.0, 7.0, 1e10, 1e30, 3.4e38)  # fmt: skip
ZERO_POINTS = (0, 1, -1, 127, -128, 128, -129, 255, 256, 32767, -32768, 65536, INT32_MAX,
               INT32_MIN, 2**40, -(2**40))  # fmt: skip
OPTION_INTS = (-(2**31), -129, -3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 64, 127, 255, 2**15, 2**31 - 1)
OPTION_FLOATS = (math.nan, math.inf, -math.inf, 0.0, -1.0, 1e-30, 0.2, 1.0, 1e30)


@dataclass(frozen=True)
class Seed:
    name: str
    data: bytes


@dataclass(frozen=True)
class Mutant:
    index: int
    seed: str
    family: str
    kind: str  # the mutations applied, e.g. "graph:scale+graph:options"
    data: bytes


# --- Seeds -------------------------------------------------------------------------------------


def _quant_conv(
    b: GraphBuilder, rng: np.random.Generator, x: int, s_x: float, shape: tuple[int, ...]
) -> tuple[int, int]:
    """Per-channel int8 weights of `shape` (O first) and an int32 bias at s_x * s_w."""
    scales = [float(s) for s in rng.uniform(0.002, 0.01, shape[0])]
    w = b.const(rng.integers(-127, 128, shape, dtype=np.int8), scale=scales, axis=0)
    bias = rng.integers(-3000, 3000, shape[0], dtype=np.int32)
    return w, b.const(bias, scale=[s_x * s for s in scales])


def seed_mlp_int8() -> bytes:
    """FULLY_CONNECTED with bias, fused ReLU, LOGISTIC, TANH, SOFTMAX, MUL, SUB, MAXIMUM, int8."""
    rng = np.random.default_rng(11)
    b = GraphBuilder("mlp_int8")
    x = b.input((2, 12), "int8", scale=0.05, zero_point=4)
    h = b.activation((2, 8), "int8", scale=0.08, zero_point=-20)
    w, bias = _quant_conv(b, rng, x, 0.05, (8, 12))
    b.op("FULLY_CONNECTED", [x, w, bias], [h], fused_activation_function=1)
    sig = b.activation((2, 8), "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [h], [sig])
    th = b.activation((2, 8), "int8", scale=1 / 128, zero_point=0)
    b.op("TANH", [h], [th])
    prod = b.activation((2, 8), "int8", scale=0.004, zero_point=0)
    b.op("MUL", [sig, th], [prod])
    diff = b.activation((2, 8), "int8", scale=0.01, zero_point=3)
    b.op("SUB", [prod, th], [diff])
    big = b.activation((2, 8), "int8", scale=0.01, zero_point=3)
    b.op("MAXIMUM", [diff, b.const(np.full((1, 8), 5, np.int8), scale=0.01, zero_point=3)], [big])
    y = b.activation((2, 8), "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [big], [y], beta=1.0)
    b.output(y)
    return b.tflite()


def seed_float_mix() -> bytes:
    """float32 CONV_2D, DEPTHWISE, MEAN, LEAKY_RELU, HARD_SWISH, RESIZE_BILINEAR, PAD, FC."""
    rng = np.random.default_rng(12)
    b = GraphBuilder("float_mix")
    x = b.input((1, 6, 6, 3), "float32")
    c = b.activation((1, 6, 6, 4), "float32")
    w = b.const(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    b.op("CONV_2D", [x, w, b.const(rng.standard_normal(4).astype(np.float32))], [c], padding=0,
         stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
         fused_activation_function=3)  # fmt: skip
    d = b.activation((1, 3, 3, 8), "float32")
    dw = b.const(rng.standard_normal((1, 3, 3, 8)).astype(np.float32))
    b.op("DEPTHWISE_CONV_2D", [c, dw, b.const(np.zeros(8, np.float32))], [d], padding=0,
         stride_h=2, stride_w=2, depth_multiplier=2, dilation_h_factor=1,
         dilation_w_factor=1)  # fmt: skip
    lk = b.activation((1, 3, 3, 8), "float32")
    b.op("LEAKY_RELU", [d], [lk], alpha=0.2)
    hs = b.activation((1, 3, 3, 8), "float32")
    b.op("HARD_SWISH", [lk], [hs])
    up = b.activation((1, 5, 5, 8), "float32")
    b.op(
        "RESIZE_BILINEAR", [hs, b.const(np.array([5, 5], np.int32))], [up], half_pixel_centers=True
    )
    pad = b.activation((1, 6, 7, 8), "float32")
    b.op("PAD", [up, b.const(np.array([[0, 0], [1, 0], [1, 1], [0, 0]], np.int32))], [pad])
    m = b.activation((1, 8), "float32")
    b.op("MEAN", [pad, b.const(np.array([1, 2], np.int32))], [m], keep_dims=False)
    y = b.activation((1, 3), "float32")
    fw = b.const(rng.standard_normal((3, 8)).astype(np.float32))
    b.op("FULLY_CONNECTED", [m, fw, b.const(np.zeros(3, np.float32))], [y])
    b.output(y)
    return b.tflite()


def seed_shapes_int8() -> bytes:
    """PAD, TRANSPOSE, STRIDED_SLICE, CONCATENATION, SPLIT, RESHAPE, MEAN, MAX_POOL, QUANTIZE."""
    rng = np.random.default_rng(13)
    b = GraphBuilder("shapes_int8")
    q: dict[str, Any] = dict(scale=0.1, zero_point=-5)
    x = b.input((1, 4, 4, 6), "int8", **q)
    p = b.activation((1, 6, 6, 6), "int8", **q)
    b.op("PAD", [x, b.const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))], [p])
    t = b.activation((1, 6, 6, 6), "int8", **q)
    b.op("TRANSPOSE", [p, b.const(np.array([0, 2, 1, 3], np.int32))], [t])
    s = b.activation((1, 3, 3, 6), "int8", **q)
    idx = [b.const(np.array(v, np.int32)) for v in ([0, 0, 1, 0], [1, 6, 6, 6], [1, 2, 2, 1])]
    b.op("STRIDED_SLICE", [t, *idx], [s])
    mp = b.activation((1, 3, 3, 6), "int8", **q)
    b.op("MAX_POOL_2D", [s], [mp], padding=0, stride_h=1, stride_w=1, filter_height=2,
         filter_width=2)  # fmt: skip
    cat = b.activation((1, 3, 3, 12), "int8", **q)
    b.op("CONCATENATION", [s, mp], [cat], axis=3)
    halves = [b.activation((1, 3, 3, 6), "int8", **q) for _ in range(2)]
    b.op("SPLIT", [b.const(np.array([3], np.int32)), cat], halves, num_splits=2)
    w, bias = _quant_conv(b, rng, halves[1], 0.1, (4, 1, 1, 6))
    conv = b.activation((1, 3, 3, 4), "int8", scale=0.05, zero_point=0)
    b.op("CONV_2D", [halves[1], w, bias], [conv], padding=1, stride_h=1, stride_w=1,
         dilation_h_factor=1, dilation_w_factor=1, fused_activation_function=0)  # fmt: skip
    mean = b.activation((1, 1, 1, 4), "int8", scale=0.04, zero_point=2)
    b.op("MEAN", [conv, b.const(np.array([1, 2], np.int32))], [mean], keep_dims=True)
    flat = b.activation((1, 4), "int8", scale=0.04, zero_point=2)
    b.op("RESHAPE", [mean, b.const(np.array([1, 4], np.int32))], [flat])
    y = b.activation((1, 4), "int8", scale=0.02, zero_point=-1)
    b.op("QUANTIZE", [flat], [y])
    b.output(y, halves[0])
    return b.tflite()


def seed_misc_int8() -> bytes:
    """HARD_SWISH, LEAKY_RELU, PRELU, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, TRANSPOSE_CONV, SQUEEZE,
    EXPAND_DIMS, SPLIT_V, MINIMUM, UNPACK, PACK and DEQUANTIZE, int8."""
    rng = np.random.default_rng(14)
    b = GraphBuilder("misc_int8")
    q: dict[str, Any] = dict(scale=0.04, zero_point=-10)
    x = b.input((1, 4, 4, 4), "int8", scale=0.05, zero_point=-3)
    hs = b.activation((1, 4, 4, 4), "int8", **q)
    b.op("HARD_SWISH", [x], [hs])
    lk = b.activation((1, 4, 4, 4), "int8", **q)
    b.op("LEAKY_RELU", [hs], [lk], alpha=0.1)
    pr = b.activation((1, 4, 4, 4), "int8", **q)
    alpha = b.const(rng.integers(-50, 50, (1, 1, 4), dtype=np.int8), scale=0.01)
    b.op("PRELU", [lk, alpha], [pr])
    block = b.const(np.array([2, 2], np.int32))
    s2b = b.activation((4, 2, 2, 4), "int8", **q)
    b.op("SPACE_TO_BATCH_ND", [pr, block, b.const(np.zeros((2, 2), np.int32))], [s2b])
    b2s = b.activation((1, 4, 4, 4), "int8", **q)
    b.op("BATCH_TO_SPACE_ND", [s2b, block, b.const(np.zeros((2, 2), np.int32))], [b2s])
    w, bias = _quant_conv(b, rng, b2s, 0.04, (2, 3, 3, 4))
    tc = b.activation((1, 8, 8, 2), "int8", scale=0.1, zero_point=0)
    shape = b.const(np.array([1, 8, 8, 2], np.int32))
    b.op("TRANSPOSE_CONV", [shape, w, b2s, bias], [tc], padding=0, stride_h=2, stride_w=2)
    sq = b.activation((8, 8, 2), "int8", scale=0.1, zero_point=0)
    b.op("SQUEEZE", [tc], [sq], squeeze_dims=[0])
    ex = b.activation((1, 8, 8, 2), "int8", scale=0.1, zero_point=0)
    b.op("EXPAND_DIMS", [sq, b.const(np.array([0], np.int32))], [ex])
    parts = [b.activation((1, 8, 8, 1), "int8", scale=0.1, zero_point=0) for _ in range(2)]
    sizes, axis = b.const(np.array([1, 1], np.int32)), b.const(np.array([3], np.int32))
    b.op("SPLIT_V", [ex, sizes, axis], parts, num_splits=2)
    mn = b.activation((1, 8, 8, 1), "int8", scale=0.1, zero_point=0)
    b.op("MINIMUM", parts, [mn])
    un = b.activation((1, 8, 8), "int8", scale=0.1, zero_point=0)
    b.op("UNPACK", [mn], [un], num=1, axis=3)
    pk = b.activation((1, 1, 8, 8), "int8", scale=0.1, zero_point=0)
    b.op("PACK", [un], [pk], values_count=1, axis=0)
    y = b.activation((1, 1, 8, 8), "float32")
    b.op("DEQUANTIZE", [pk], [y])
    b.output(y)
    return b.tflite()


def seeds(models: Path | None = SHARED_MODELS) -> list[Seed]:
    """The seed corpus, in a fixed order."""
    found = [
        Seed("tiny_cnn_int8", (ROOT / "examples" / "tiny_cnn_int8.tflite").read_bytes()),
        Seed("mlp_int8", seed_mlp_int8()),
        Seed("float_mix", seed_float_mix()),
        Seed("shapes_int8", seed_shapes_int8()),
        Seed("misc_int8", seed_misc_int8()),
        Seed("nas_cells1", write_model(nas_cells(1, cells=1))),
        Seed("unet2", write_model(unet(1, depth=2, hw=8))),
    ]
    if models is not None and models.is_dir():
        found += [Seed(p.stem, p.read_bytes()) for p in sorted(models.glob("*.tflite"))]
    return found


# --- Byte-level mutations ----------------------------------------------------------------------


def _bytes(data: bytearray, rng: random.Random) -> str:
    kind = rng.choice(("flip", "byte", "word", "insert", "delete", "truncate", "duplicate"))
    n = len(data)
    pos = rng.randrange(max(n, 1))
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(n)] ^= 1 << rng.randrange(8)
    elif kind == "byte":
        data[pos] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
    elif kind == "word" and n >= 8:
        pos = rng.randrange(0, n - 4) & ~3
        data[pos : pos + 4] = struct.pack("<i", rng.choice(WORDS))
    elif kind == "insert":
        data[pos:pos] = rng.randbytes(rng.choice((1, 3, 4, 8, 64)))
    elif kind == "delete":
        del data[pos : pos + rng.choice((1, 4, 8, 64))]
    elif kind == "truncate":
        del data[rng.randrange(max(n, 1)) :]
    elif kind == "duplicate":
        start = rng.randrange(max(n, 1))
        data[pos:pos] = data[start : start + rng.choice((4, 16, 256))]
    return f"bytes:{kind}"


# --- Field patches -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """A scalar of the flatbuffer at `pos`, of struct format `fmt`, named `what`."""

    pos: int
    fmt: str
    what: str


def _vector_fields(tab: Any, slot: int, fmt: str, what: str) -> list[Field]:
    """The length word and the elements of the vector in field `slot` of table `tab`."""
    o = tab.Offset(slot)
    if o == 0:
        return []
    start, n = tab.Vector(o), tab.VectorLen(o)
    size = struct.calcsize(fmt)
    return [Field(start - 4, "<I", f"{what} length")] + [
        Field(start + size * j, fmt, what) for j in range(min(n, 16))
    ]


def _scalar_field(tab: Any, slot: int, fmt: str, what: str) -> list[Field]:
    o = tab.Offset(slot)
    return [Field(tab.Pos + o, fmt, what)] if o else []


def fields(data: bytes) -> list[Field]:
    """Patchable fields of a (valid) model: tensors, operators, subgraph inputs and outputs."""
    model = tflite.Model.GetRootAs(data, 0)
    sg = model.Subgraphs(0)
    found = _vector_fields(sg._tab, 6, "<i", "subgraph input")
    found += _vector_fields(sg._tab, 8, "<i", "subgraph output")
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        found += _scalar_field(t._tab, 6, "<b", "tensor type")
        found += _scalar_field(t._tab, 8, "<I", "tensor buffer")
        found += _vector_fields(t._tab, 4, "<i", "tensor shape")
        q = t.Quantization()
        if q is not None:
            found += _vector_fields(q._tab, 8, "<f", "scale")
            found += _vector_fields(q._tab, 10, "<q", "zero point")
            found += _scalar_field(q._tab, 16, "<i", "quantized dimension")
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        found += _scalar_field(op._tab, 4, "<I", "opcode index")
        found += _vector_fields(op._tab, 6, "<i", "operator input")
        found += _vector_fields(op._tab, 8, "<i", "operator output")
    return found


def _patch(data: bytearray, field: Field, rng: random.Random) -> str:
    if field.fmt == "<f":
        value: float | int = rng.choice(SCALES)
    elif field.fmt == "<q":
        value = rng.choice(ZERO_POINTS)
    elif field.fmt == "<b":
        value = rng.choice((-1, 0, 1, 2, 3, 5, 8, 9, 11, 17, 127))
    else:
        value = rng.choice(WORDS)
        if field.fmt == "<I":
            value &= 0xFFFFFFFF
    struct.pack_into(field.fmt, data, field.pos, value)
    return f"field:{field.what}"


# --- Graph mutations ---------------------------------------------------------------------------

GraphMutation = Callable[[Graph, random.Random], Graph]


def _set_tensor(g: Graph, t: Tensor) -> Graph:
    tensors = list(g.tensors)
    tensors[t.index] = t
    return replace(g, tensors=tuple(tensors))


def _set_op(g: Graph, op: Operator) -> Graph:
    ops = list(g.operators)
    ops[op.index] = op
    return replace(g, operators=tuple(ops))


def _resized(data: bytes, nbytes: int, rng: random.Random) -> bytes:
    """`data` cut or extended with random bytes to `nbytes` (capped to stay small)."""
    return (data + rng.randbytes(max(0, min(nbytes, 1 << 22) - len(data))))[:nbytes]


def m_shape(g: Graph, rng: random.Random) -> Graph:
    t = rng.choice(g.tensors)
    shape = list(t.shape)
    if shape and rng.random() < 0.8:
        i = rng.randrange(len(shape))
        shape[i] = rng.choice((*DIMS, shape[i] + 1, max(shape[i] - 1, 0), 2 * shape[i]))
    elif rng.random() < 0.5 or not shape:
        shape.insert(rng.randrange(len(shape) + 1), rng.choice((1, 2, 3)))
    else:
        shape.pop(rng.randrange(len(shape)))
    new = replace(t, shape=tuple(shape))
    if t.data is not None and rng.random() < 0.7 and new.nbytes <= 1 << 22:
        new = replace(new, data=_resized(t.data, new.nbytes, rng))  # keep the file importable
    return _set_tensor(g, new)


def m_dtype(g: Graph, rng: random.Random) -> Graph:
    t = rng.choice(g.tensors)
    new = replace(t, dtype=rng.choice(sorted(DTYPES)))
    if t.data is not None:
        new = replace(new, data=_resized(t.data, new.nbytes, rng))
    return _set_tensor(g, new)


def m_operand(g: Graph, rng: random.Random) -> Graph:
    if not g.operators:
        return g
    op = rng.choice(g.operators)
    field = rng.choice(("inputs", "outputs"))
    operands = list(getattr(op, field))
    choice = rng.choice(("other", "missing", "out of range", "drop", "add", "clear"))
    n = len(g.tensors)
    if choice in ("other", "missing", "out of range") and operands:
        k = rng.randrange(len(operands))
        operands[k] = {
            "other": rng.randrange(n),
            "missing": -1,
            "out of range": n + rng.randrange(3),
        }[choice]
    elif choice == "drop" and operands:
        operands.pop(rng.randrange(len(operands)))
    elif choice == "add":
        operands.append(rng.randrange(n))
    else:
        operands = []
    if field == "inputs":
        return _set_op(g, replace(op, inputs=tuple(operands)))
    return _set_op(g, replace(op, outputs=tuple(operands)))


def m_cycle(g: Graph, rng: random.Random) -> Graph:
    """An operator reads what a later one writes, or two operators swap places."""
    if len(g.operators) < 2:
        return g
    i, j = sorted(rng.sample(range(len(g.operators)), 2))
    a, b = g.operators[i], g.operators[j]
    if rng.random() < 0.5 and a.inputs and b.outputs:
        inputs = list(a.inputs)
        inputs[rng.randrange(len(inputs))] = rng.choice(b.outputs)
        return _set_op(g, replace(a, inputs=tuple(inputs)))
    ops = list(g.operators)
    ops[i], ops[j] = replace(b, index=i), replace(a, index=j)
    return replace(g, operators=tuple(ops))


def m_graph_io(g: Graph, rng: random.Random) -> Graph:
    constants = [t.index for t in g.tensors if t.is_constant]
    others = [t.index for t in g.tensors if not t.is_constant]
    field = rng.choice(("inputs", "outputs"))
    io = list(getattr(g, field))
    choice = rng.choice(("constant", "activation", "drop", "duplicate", "clear"))
    if choice == "constant" and constants:
        io.append(rng.choice(constants))
    elif choice == "activation" and others:
        io.append(rng.choice(others))
    elif choice == "drop" and io:
        io.pop(rng.randrange(len(io)))
    elif choice == "duplicate" and io:
        io.append(rng.choice(io))
    elif choice == "clear":
        io = []
    return replace(g, inputs=tuple(io)) if field == "inputs" else replace(g, outputs=tuple(io))


def _quantized(g: Graph) -> list[Tensor]:
    return [t for t in g.tensors if t.quant is not None] or list(g.tensors)


def _quant_entry(
    g: Graph, rng: random.Random, field: str, absent: Quantization, values: Sequence[Any]
) -> Graph:
    """A quantized tensor's `field` (`absent`'s if none) with one entry set to one of `values`."""
    t = rng.choice(_quantized(g))
    q = t.quant or absent
    entries = list(getattr(q, field))
    entries[rng.randrange(len(entries))] = rng.choice(values)
    new = tuple(entries)
    q = replace(q, scales=new) if field == "scales" else replace(q, zero_points=new)
    return _set_tensor(g, replace(t, quant=q))


def m_scale(g: Graph, rng: random.Random) -> Graph:
    return _quant_entry(g, rng, "scales", Quantization((1.0,), (0,)), SCALES)


def m_zero_point(g: Graph, rng: random.Random) -> Graph:
    return _quant_entry(g, rng, "zero_points", Quantization((0.1,), (0,)), ZERO_POINTS)


def m_channels(g: Graph, rng: random.Random) -> Graph:
    """Per-channel quantization with the wrong count or axis, or removed altogether."""
    t = rng.choice(_quantized(g))
    q = t.quant
    choice = rng.choice(("count", "axis", "none"))
    if q is None or choice == "none":
        return _set_tensor(g, replace(t, quant=None))
    if choice == "axis":
        return _set_tensor(g, replace(t, quant=replace(q, axis=rng.choice((-1, 0, 1, 3, 4, 9)))))
    n = rng.choice((1, 2, max(len(q.scales) - 1, 1), len(q.scales) + 1))
    return _set_tensor(
        g, replace(t, quant=Quantization((q.scale,) * n, (q.zero_point,) * n, q.axis))
    )


def _option_value(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice((*OPTION_INTS, value + 1, value - 1))
    if isinstance(value, float):
        return rng.choice(OPTION_FLOATS)
    if isinstance(value, tuple):
        items = list(value)
        if items and rng.random() < 0.7:
            items[rng.randrange(len(items))] = rng.choice(OPTION_INTS)
        else:
            items.append(rng.choice(OPTION_INTS))
        return tuple(items)
    return value


def m_options(g: Graph, rng: random.Random) -> Graph:
    with_options = [op for op in g.operators if op.options]
    if not with_options:
        return g
    op = rng.choice(with_options)
    options = dict(op.options)
    key = rng.choice(sorted(options))
    options[key] = _option_value(options[key], rng)
    return _set_op(g, replace(op, options=MappingProxyType(options)))


def m_opcode(g: Graph, rng: random.Random) -> Graph:
    if not g.operators:
        return g
    op = rng.choice(g.operators)
    opcode = rng.choice(sorted({o.opcode for o in g.operators} | {"ADD", "RESHAPE", "SOFTMAX"}))
    return _set_op(g, replace(op, opcode=opcode, options_type=op.options_type or ""))


def m_data(g: Graph, rng: random.Random) -> Graph:
    """Weights and biases at random or at their type's extremes (valid files, new arithmetic)."""
    constants = [t for t in g.tensors if t.is_constant and t.data]
    if not constants:
        return g
    t = rng.choice(constants)
    np_dtype = np.dtype(DTYPES[t.dtype][0])
    if np_dtype.kind in "iu" and rng.random() < 0.5:
        info = np.iinfo(np_dtype)
        fill = rng.choice((info.min, info.max, 0))
        data = np.full(t.num_elements, fill, np_dtype).tobytes()
    else:
        data = rng.randbytes(len(t.data or b""))
    return _set_tensor(g, replace(t, data=data))


def m_constness(g: Graph, rng: random.Random) -> Graph:
    """A constant loses its data, an activation gets some, or a tensor becomes a variable."""
    t = rng.choice(g.tensors)
    choice = rng.choice(("data", "variable"))
    if choice == "variable":
        return _set_tensor(g, replace(t, is_variable=not t.is_variable))
    if t.is_constant:
        return _set_tensor(g, replace(t, data=None))
    return _set_tensor(g, replace(t, data=rng.randbytes(min(t.nbytes, 1 << 20))))


GRAPH_MUTATIONS: dict[str, GraphMutation] = {
    "shape": m_shape,
    "dtype": m_dtype,
    "operand": m_operand,
    "cycle": m_cycle,
    "graph io": m_graph_io,
    "scale": m_scale,
    "zero point": m_zero_point,
    "channels": m_channels,
    "options": m_options,
    "opcode": m_opcode,
    "data": m_data,
    "constness": m_constness,
}


# --- Mutants -----------------------------------------------------------------------------------


class Corpus:
    """The seeds with what mutating them needs (imported graph, patchable fields), built lazily."""

    def __init__(self, seed_list: list[Seed]) -> None:
        self.seeds = seed_list
        self._graphs: dict[str, Graph] = {}
        self._fields: dict[str, list[Field]] = {}

    def graph(self, seed: Seed) -> Graph:
        if seed.name not in self._graphs:
            self._graphs[seed.name] = import_model(seed.data, source=seed.name)
        return self._graphs[seed.name]

    def fields(self, seed: Seed) -> list[Field]:
        if seed.name not in self._fields:
            self._fields[seed.name] = fields(seed.data)
        return self._fields[seed.name]

    def mutant(self, run_seed: int, index: int) -> Mutant:
        rng = random.Random(f"{run_seed}:{index}")
        seed = rng.choice(self.seeds)
        family = rng.choices(("bytes", "fields", "graph"), weights=(3, 2, 5))[0]
        count = rng.choice((1, 1, 1, 2, 3))
        if family == "graph":
            kinds, data = self._graph_mutant(seed, rng, count)
            if data is not None:
                return Mutant(index, seed.name, family, "+".join(kinds), data)
            family = "bytes"  # the writer refused every try: mutate the bytes instead
        buf = bytearray(seed.data)
        kinds = []
        for _ in range(count):
            if family == "fields" and self.fields(seed):
                kinds.append(_patch(buf, rng.choice(self.fields(seed)), rng))
            elif buf:
                kinds.append(_bytes(buf, rng))
        return Mutant(index, seed.name, family, "+".join(kinds), bytes(buf))

    def _graph_mutant(
        self, seed: Seed, rng: random.Random, count: int
    ) -> tuple[list[str], bytes | None]:
        for _ in range(5):
            g = self.graph(seed)
            kinds = rng.choices(sorted(GRAPH_MUTATIONS), k=count)
            for kind in kinds:
                g = GRAPH_MUTATIONS[kind](g, rng)
            try:
                return [f"graph:{k}" for k in kinds], write_model(g)
            except Exception:  # an option value its field cannot hold, a bad index: try again
                continue
        return [], None
