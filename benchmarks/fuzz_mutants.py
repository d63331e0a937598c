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

import random
import struct
from dataclasses import dataclass
from typing import Any

import tflite
from fuzz_graph_mutations import GRAPH_MUTATIONS, INT32_MAX, INT32_MIN, SCALES, ZERO_POINTS
from fuzz_seeds import Seed
from fuzz_seeds import seeds as seeds  # re-exported: benchmarks/fuzz.py and the tests take it here

from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model

WORDS = (0, 1, 2, 3, 4, 7, 8, 16, 255, 256, 4096, 65535, 65536, INT32_MAX, INT32_MIN, -1, -2)


@dataclass(frozen=True)
class Mutant:
    index: int
    seed: str
    family: str
    kind: str  # the mutations applied, e.g. "graph:scale+graph:options"
    data: bytes


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
