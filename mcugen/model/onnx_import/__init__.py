"""Import a quantized ONNX model (QDQ form, as onnxruntime's quantize_static writes it, or its
QOperator form, rewritten to QDQ first by qoperator.py) into the Graph IR the TFLite importer
builds, so every planner, kernel and report works unchanged.

Steps: parse the protobuf (`onnx`), make one int8 IR input per graph input (NHWC for a rank-4
input), convert the nodes in their (topological) order, each float operator together with the
QuantizeLinear nodes after it (context.py says how values, layouts and uint8 are mapped), then
check the result with the model-level rules of mcugen/model/validate.py. The nodes onnxruntime
would leave unfused (fusion.py) are recorded in the graph's metadata. Every failure is one
`ModelError` or `UnsupportedError` line naming the node. O(nodes + weights).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from types import MappingProxyType

import onnx

from mcugen.errors import McugenError, ModelError, UnsupportedError
from mcugen.model.ir import Graph
from mcugen.model.numerics import (
    DEFAULT,
    FIXED,
    FLOAT_NODES_METADATA,
    NUMERICS_METADATA,
    ORT,
    UNFUSABLE_METADATA,
)
from mcugen.model.onnx_import import fusion, ops, qoperator, shapes, windows
from mcugen.model.onnx_import.context import TO_NHWC, Context, Quant, Value, attributes
from mcugen.model.validate import validate_graph

HANDLERS: dict[str, Callable[[Context, onnx.NodeProto], None]] = {
    "QuantizeLinear": ops.quantize,
    "DequantizeLinear": ops.dequantize,
    "Constant": ops.constant,
    "Identity": ops.identity,
    "Conv": windows.conv,
    "Gemm": windows.gemm,
    "MatMul": windows.gemm,
    "MaxPool": windows.pool,
    "AveragePool": windows.pool,
    "GlobalAveragePool": windows.global_average_pool,
    "ReduceMean": windows.reduce_mean,
    "Add": ops.binary,
    "Mul": ops.binary,
    "Concat": ops.concat,
    "Reshape": ops.reshape,
    "Flatten": ops.reshape,
    "Softmax": ops.softmax,
    "Sigmoid": ops.softmax,
    "Relu": ops.relu,
    "Clip": ops.relu,
    "Pad": shapes.pad,
    "Transpose": shapes.transpose,
    "Resize": shapes.resize,
}
SUPPORTED = ", ".join(sorted(HANDLERS))
#: Graph metadata: the names of the inputs and outputs that are NCHW in the ONNX model and NHWC
#: (transposed by 0, 2, 3, 1) in mcugen's, comma-separated.
NHWC_METADATA = "onnx_nchw_stored_nhwc"
_PLAIN = Value(-1, (), Quant(1.0, 0))
_FLOAT, _UINT8, _INT8 = onnx.TensorProto.FLOAT, onnx.TensorProto.UINT8, onnx.TensorProto.INT8


def import_onnx(buf: bytes, *, source: str = "<bytes>", numerics: str = DEFAULT) -> Graph:
    """Import a QDQ-quantized ONNX model held in memory, for `numerics` "ort" or "fixed"
    (mcugen/model/numerics.py, recorded in the graph's metadata)."""
    model = _parse(buf, source)
    try:
        in_float = fusion.inexact_float_nodes(model)
        unfusable = fusion.unfusable_nodes(model)
        if qoperator.has_qoperators(model):
            model = qoperator.to_qdq(model, lambda what: UnsupportedError(what, where=source))
        graph = _convert(Context(model, source, numerics))
    except McugenError:
        raise
    except Exception:  # onnx's accessors raise anything on inconsistent fields
        raise ModelError(
            "malformed .onnx model: a tensor or attribute in it is inconsistent",
            where=source,
            hint="the file is corrupt; re-export it",
        ) from None
    graph = replace(graph, sha256=hashlib.sha256(buf).hexdigest())
    if in_float:  # where onnxruntime does not fuse: said by the commands (numerics.py)
        meta = {
            **graph.metadata,
            FLOAT_NODES_METADATA: ",".join(in_float).encode(),
            UNFUSABLE_METADATA: ",".join(unfusable).encode(),
        }
        graph = replace(graph, metadata=MappingProxyType(meta))
    validate_graph(graph, source)
    return graph


def _parse(buf: bytes, source: str) -> onnx.ModelProto:
    model = onnx.ModelProto()
    try:
        model.ParseFromString(buf)
    except Exception:
        raise ModelError(
            f"not a valid ONNX protobuf ({len(buf)} bytes)",
            where=source,
            hint="the file is truncated or corrupt, or not an ONNX model",
        ) from None
    if model.ir_version <= 0 or not model.HasField("graph") or not model.graph.node:
        raise ModelError(
            "no ONNX graph in the file",
            where=source,
            hint="the file is empty, truncated or not ONNX",
        )
    return model


def _convert(ctx: Context) -> Graph:
    for node in ctx.graph.node:
        if node.domain not in ("", "ai.onnx") or node.op_type not in HANDLERS:
            op = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
            raise UnsupportedError(
                f"operator {op} is not supported",
                where=ctx.where(node),
                hint=f"supported: {SUPPORTED}",
            )
    _graph_inputs(ctx)
    for i, node in enumerate(ctx.graph.node):
        if i not in ctx.done:
            HANDLERS[node.op_type](ctx, node)
    nhwc = [inp.name for inp in ctx.graph.input if ctx.values.get(inp.name, _PLAIN).nhwc]
    for out in ctx.graph.output:
        value = ctx.value(out.name, None)
        ctx.b.tensors[value.index] = replace(ctx.b.tensors[value.index], name=out.name)
        ctx.b.output(value.index)
        nhwc += [out.name] if value.nhwc else []
    graph = ctx.b.graph()
    meta = {
        NHWC_METADATA: ",".join(nhwc).encode(),
        NUMERICS_METADATA: (ORT if ctx.ort else FIXED).encode(),
    }
    return replace(graph, metadata=MappingProxyType(meta))


def _nhwc_input(ctx: Context, name: str, dims: tuple[int, ...]) -> str | None:
    """An NHWC input read only by Transpose(0, 3, 1, 2) nodes (tf2onnx's export of a Keras
    model): the one transposed name they share, stored as the input itself (no transpose)."""
    readers = [ctx.graph.node[i] for i in ctx.consumers.get(name, [])]
    if len(dims) != 4 or len(readers) != 1 or readers[0].op_type != "Transpose":
        return None
    perm = [int(p) for p in attributes(readers[0]).get("perm", ())]
    if perm != [0, 3, 1, 2]:
        return None
    ctx.done.add(ctx.consumers[name][0])
    return readers[0].output[0]


def _graph_inputs(ctx: Context) -> None:
    """One int8 IR input per graph input, quantized as its QuantizeLinear (a float input) or
    DequantizeLinear (an int8/uint8 input) readers say. A rank-4 input is taken as NCHW (stored
    NHWC), unless a Transpose to NCHW reads it (it is NHWC: stored as it is)."""
    for inp in ctx.graph.input:
        if inp.name in ctx.consts:
            continue
        tt = inp.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim)
        if any(d <= 0 for d in dims):
            raise ModelError(
                f"input {inp.name!r} has a dynamic or empty shape {dims}",
                where=ctx.source,
                hint="export the model with fixed input shapes (batch 1)",
            )
        transposed = _nhwc_input(ctx, inp.name, dims)
        name = transposed or inp.name
        readers = [ctx.graph.node[i] for i in ctx.consumers.get(name, [])]
        wanted = "QuantizeLinear" if tt.elem_type == _FLOAT else "DequantizeLinear"
        if (
            tt.elem_type not in (_FLOAT, _UINT8, _INT8)
            or not readers
            or any(r.op_type != wanted for r in readers)
        ):
            raise UnsupportedError(
                f"input {inp.name!r} must be float read only by QuantizeLinear, or int8/uint8 "
                "read only by DequantizeLinear",
                where=ctx.source,
                hint="mcugen imports quantized QDQ models: `mcugen quantize MODEL --data "
                "CALIB.npz -o OUT` makes one with onnxruntime",
            )
        quants = {ctx.quant_of(r) for r in readers}
        if len(quants) != 1:
            raise UnsupportedError(
                f"input {inp.name!r} is quantized with different parameters", where=ctx.source
            )
        quant = quants.pop()
        nhwc = len(dims) == 4 and transposed is None
        shape = tuple(dims[a] for a in TO_NHWC) if nhwc else dims
        index = ctx.b.input(
            shape, "int8", scale=quant.scale, zero_point=quant.zero_point, name=inp.name
        )
        if transposed is not None:
            nchw = (dims[0], dims[3], dims[1], dims[2])
            ctx.values[inp.name] = Value(index, dims, quant)
        value = (
            Value(index, nchw, quant, nhwc=True) if transposed else Value(index, dims, quant, nhwc)
        )
        ctx.values[name] = value
        if wanted == "QuantizeLinear":
            for i in ctx.consumers[name]:
                ctx.done.add(i)
                ctx.values[ctx.graph.node[i].output[0]] = value
