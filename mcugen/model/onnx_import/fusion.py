"""Which quantized operators of a QDQ model onnxruntime runs in float, decided from the ONNX
graph with the rules onnxruntime's CPU build applies on x86-64 (default graph optimisations,
onnxruntime 1.32; tests/unit/test_onnx_fusion.py checks the answer against the optimised graph
onnxruntime itself writes, `SessionOptions.optimized_model_filepath`, for every test network).

onnxruntime replaces a QDQ group (DequantizeLinear inputs, a float operator, one QuantizeLinear
after it) by a quantized kernel only when the group's integer types agree, and on x86-64 its
fused Conv and MatMul take no int8 activations (QDQIsInt8Allowed is false there). Its steps:

1. Identical QuantizeLinear nodes (same inputs: the value, scale and zero point names) are
   merged (common subexpression elimination), so quantize_static's `DedicatedQDQPair` pairs,
   which share their scale and zero point, become one again.
2. A DequantizeLinear read by several inputs is copied, one per input
   (EnsureUniqueDQForNodeUnit).
3. QDQS8ToU8Transformer turns an int8 QuantizeLinear -> DequantizeLinear pair into uint8 only
   when the QuantizeLinear's output feeds exactly that one DequantizeLinear (and is no graph
   output), with equal per-tensor zero points. After step 2, an activation read by two operators
   (a residual or branch fork) feeds two, and stays int8; int8 constants (a Mul's or Add's
   quantized operand) stay int8 as well.
4. The group selectors: Conv and MatMul need input type = output type and not int8; Gemm input
   type = output type; Add, Mul, Concat all types equal; AveragePool, GlobalAveragePool, Sigmoid
   and Softmax input type = output type; and every group needs each input from a
   DequantizeLinear and the output read by exactly one QuantizeLinear (not a graph output).

A group that fails runs as DequantizeLinear, the float operator and QuantizeLinear: a float
Conv or Gemm sums in MLAS's order and a float Add or Mul rounds once, where `--onnx-numerics ort`
reproduces the fused kernel; outputs can then differ by a few steps (docs/onnx.md). A float
Concat is exact (its requantisation is the same table). O(nodes + edges).

Known limits: the rules are x86-64's (an Arm build of onnxruntime allows int8 activations in its
fused kernels and would fuse these groups; not measured here) and onnxruntime 1.32's (another
version may change them: the test against its optimised graph then fails); selectors of
operators mcugen does not import (Where, Resize's, Split's) are not modelled."""

from __future__ import annotations

import onnx
from onnx import numpy_helper

#: The operators onnxruntime's QDQ selectors fuse, and the type rule each group must meet.
_SAME_IN_OUT = ("AveragePool", "GlobalAveragePool", "Sigmoid", "Softmax", "Gemm")
_ALL_EQUAL = ("Add", "Mul", "Concat")
_NO_INT8 = ("Conv", "MatMul")
FUSED_KINDS = _SAME_IN_OUT + _ALL_EQUAL + _NO_INT8
#: Quantized operators mcugen imports that onnxruntime never fuses: their groups run in float.
NEVER_FUSED = ("ReduceMean",)
#: Groups whose float computation gives the fused kernel's integers anyway.
EXACT_IN_FLOAT = frozenset({"Concat"})
_INT8, _UINT8 = onnx.TensorProto.INT8, onnx.TensorProto.UINT8


class _Edges:
    """Who reads each value (one entry per input slot), after identical QuantizeLinear nodes
    are merged: `alias` maps a merged node's output to the one kept."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.alias: dict[str, str] = {}
        kept: dict[tuple[str, ...], str] = {}
        for node in graph.node:
            if node.op_type == "QuantizeLinear" and len(node.output) == 1:
                key = (*node.input, *(a.SerializeToString().hex() for a in node.attribute))
                self.alias[node.output[0]] = kept.setdefault(key, node.output[0])
        self.producer: dict[str, onnx.NodeProto] = {}
        self.readers: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            first = node.output[0] if node.output else ""
            if self.alias.get(first, first) != first:
                continue  # a duplicate QuantizeLinear, merged into the one kept
            for out in node.output:
                self.producer[out] = node
            for name in node.input:
                if name:
                    self.readers.setdefault(self.name(name), []).append(node)
        self.outputs = {self.name(o.name) for o in graph.output}

    def name(self, value: str) -> str:
        return self.alias.get(value, value)

    def count(self, value: str) -> int:
        return len(self.readers.get(value, [])) + (value in self.outputs)


def _zero_point_type(node: onnx.NodeProto, inits: dict[str, onnx.TensorProto]) -> int:
    """The integer type a QuantizeLinear writes (its zero point's; uint8 without one)."""
    zp = inits.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    return zp.data_type if zp is not None else _UINT8


def _scalar_int8(name: str, inits: dict[str, onnx.TensorProto]) -> bool:
    t = inits.get(name)
    return t is not None and t.data_type == _INT8 and numpy_helper.to_array(t).size == 1


class _Types:
    """The integer type each DequantizeLinear reads once onnxruntime has converted int8 pairs
    to uint8 (steps 1-3 of the module docstring)."""

    def __init__(self, model: onnx.ModelProto, edges: _Edges) -> None:
        graph = model.graph
        self.inits = {t.name: t for t in graph.initializer}
        self.edges = edges
        self.declared = {v.name: v.type.tensor_type.elem_type for v in graph.input}
        self.u8: set[str] = {
            q.output[0]
            for q in graph.node
            if q.op_type == "QuantizeLinear" and edges.name(q.output[0]) == q.output[0]
            if self._converted(q)
        }

    def _converted(self, q: onnx.NodeProto) -> bool:
        out = q.output[0]
        readers = self.edges.readers.get(out, [])
        if out in self.edges.outputs or len(readers) != 1:
            return False
        dq = readers[0]
        if dq.op_type != "DequantizeLinear" or self.edges.count(dq.output[0]) > 1:
            return False
        zps = (q.input[2] if len(q.input) > 2 else "", dq.input[2] if len(dq.input) > 2 else "")
        return (
            all(_scalar_int8(z, self.inits) for z in zps)
            and len({numpy_helper.to_array(self.inits[z]).item() for z in zps}) == 1
        )

    def read_by(self, dq: onnx.NodeProto) -> int:
        """The type of the integer tensor DequantizeLinear `dq` reads."""
        source = self.edges.name(dq.input[0])
        if source in self.u8:
            return _UINT8
        q = self.edges.producer.get(source)
        if q is not None and q.op_type == "QuantizeLinear":
            return _zero_point_type(q, self.inits)
        if source in self.inits:
            return self.inits[source].data_type
        return self.declared.get(source, 0)

    def written_by(self, q: onnx.NodeProto) -> int:
        return _UINT8 if q.output[0] in self.u8 else _zero_point_type(q, self.inits)


def _group_types(node: onnx.NodeProto, types: _Types) -> tuple[list[int], int] | None:
    """(input types, output type) of `node`'s QDQ group, or None when it is no complete group
    (an input not from a DequantizeLinear, the output not read by exactly one QuantizeLinear)."""
    edges = types.edges
    inputs = [name for name in node.input if name]
    producers = [edges.producer.get(edges.name(name)) for name in inputs]
    if not producers or any(p is None or p.op_type != "DequantizeLinear" for p in producers):
        return None
    out = node.output[0]
    readers = edges.readers.get(out, [])
    if out in edges.outputs or len(readers) != 1 or readers[0].op_type != "QuantizeLinear":
        return None
    return [types.read_by(p) for p in producers if p is not None], types.written_by(readers[0])


def _fused(kind: str, ins: list[int], out: int) -> bool:
    if kind in _NO_INT8:
        return ins[0] == out and out != _INT8
    if kind in _ALL_EQUAL:
        return all(t == out for t in ins)
    return ins[0] == out


def _dequantized(feeds: list[onnx.NodeProto | None]) -> bool:
    return all(p is not None and p.op_type == "DequantizeLinear" for p in feeds)


def float_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    """The quantized operators of `model` onnxruntime (x86-64) leaves unfused and runs in float:
    nodes of the fused kinds with a DequantizeLinear input and a QuantizeLinear reader whose
    group fails its selector, and every quantized node of a kind it never fuses
    (ReduceMean). Empty for a model fully fused (a uint8 model quantize_static writes without
    such a node, or an int8 one without forks and int8 constant operands)."""
    edges = _Edges(model.graph)
    types = _Types(model, edges)
    found = []
    for node in model.graph.node:
        if node.op_type not in FUSED_KINDS + NEVER_FUSED or not node.output:
            continue
        feeds = [edges.producer.get(edges.name(n)) for n in node.input if n]
        if not any(p is not None and p.op_type == "DequantizeLinear" for p in feeds):
            continue  # a float operator, not a quantized one
        if node.op_type in NEVER_FUSED:
            found.append(node)
            continue
        group = _group_types(node, types)
        if group is None and node.op_type == "Gemm" and _dequantized(feeds):
            continue  # QGemm with a float output
        if group is None or not _fused(node.op_type, *group):
            found.append(node)
    return found


def inexact_float_nodes(model: onnx.ModelProto) -> list[str]:
    """The names of `float_nodes` whose float result can differ from the fused kernel's."""
    return [n.name or n.output[0] for n in float_nodes(model) if n.op_type not in EXACT_IN_FLOAT]


def unfusable_nodes(model: onnx.ModelProto) -> list[str]:
    """The names of `float_nodes` of a kind onnxruntime has no quantized kernel for."""
    return [n.name or n.output[0] for n in float_nodes(model) if n.op_type in NEVER_FUSED]
