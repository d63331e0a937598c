"""Structure-aware mutations of the fuzzer (benchmarks/fuzz_mutants.py): an imported graph's
shapes, types, operands, cycles, graph inputs and outputs, quantization, options, opcodes, data and
constness changed, then written back with the tflite writer."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import numpy as np

from mcugen.model.ir import DTYPES, Graph, Operator, Quantization, Tensor

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
DIMS = (0, 1, 2, 3, 5, 7, 16, 255, 4096, 65536, 2**24, 2**30, INT32_MAX)
SCALES = (0.0, -0.5, math.nan, math.inf, -math.inf, 1e-45, 1e-38, 1e-30, 1e-10, 2.0**-31,
          1e-3, 0.5, 1.0, 7.0, 1e10, 1e30, 3.4e38)  # fmt: skip
ZERO_POINTS = (0, 1, -1, 127, -128, 128, -129, 255, 256, 32767, -32768, 65536, INT32_MAX,
               INT32_MIN, 2**40, -(2**40))  # fmt: skip
OPTION_INTS = (-(2**31), -129, -3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 64, 127, 255, 2**15, 2**31 - 1)
OPTION_FLOATS = (math.nan, math.inf, -math.inf, 0.0, -1.0, 1e-30, 0.2, 1.0, 1e30)


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
