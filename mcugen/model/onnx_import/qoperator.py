"""QOperator form (QLinearConv, QGemm, QLinearAdd, ... as onnxruntime's quantize_static writes
with QuantFormat.QOperator) rewritten to the QDQ form the importer reads: each quantized operator
becomes DequantizeLinear of its inputs, the float operator and a QuantizeLinear with its output
scale and zero point. Operators that move int8 data (MaxPool, Flatten, Reshape, ...) get the
DequantizeLinear/QuantizeLinear pair of their input's quantization. A pure function of the model,
O(nodes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

#: QOperator node -> (float operator, positions of its (value, scale, zero point) inputs, position
#: of the output scale and zero point, position of an int32 bias (its scale is the product of
#: the first two inputs' scales))
_QLINEAR: dict[str, tuple[str, tuple[int, ...], int, int]] = {
    "QLinearConv": ("Conv", (0, 3), 6, 8),
    "QLinearMatMul": ("MatMul", (0, 3), 6, -1),
    "QGemm": ("Gemm", (0, 3), 7, 6),
    "QLinearAdd": ("Add", (0, 3), 6, -1),
    "QLinearMul": ("Mul", (0, 3), 6, -1),
    "QLinearAveragePool": ("AveragePool", (0,), 3, -1),
    "QLinearGlobalAveragePool": ("GlobalAveragePool", (0,), 3, -1),
    "QLinearSigmoid": ("Sigmoid", (0,), 3, -1),
    "QLinearSoftmax": ("Softmax", (0,), 3, -1),
}
#: Operators onnxruntime runs on int8 data directly: their output has their input's quantization.
_MOVES = {"MaxPool", "Flatten", "Reshape", "Transpose", "Resize", "Pad", "Identity"}
_DROPPED_ATTRIBUTES = {"channels_last", "opset", "domain"}


class _Rewriter:
    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.consts = {t.name: t for t in model.graph.initializer}
        self.quant: dict[str, tuple[str, str]] = {}  # int8 tensor -> (scale, zero point) names
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}__qdq{self.count}"

    def dq(self, name: str, scale: str, zp: str, axis: int | None = None) -> str:
        out = self.fresh(name)
        node = helper.make_node("DequantizeLinear", [name, scale, zp], [out], name=out)
        if axis is not None:
            node.attribute.append(helper.make_attribute("axis", axis))
        self.nodes.append(node)
        return out

    def q(self, name: str, scale: str, zp: str, out: str) -> None:
        self.nodes.append(helper.make_node("QuantizeLinear", [name, scale, zp], [out], name=out))
        self.quant[out] = (scale, zp)

    def bias(self, node: onnx.NodeProto, pos: int, scales: tuple[str, str]) -> str:
        """DequantizeLinear of an int32 bias at the product of the input and weight scales."""
        product = np.float32(self.value(scales[0])) * np.asarray(self.value(scales[1]), np.float32)
        product = np.asarray(product, np.float32).reshape(-1)
        scale, zp = self.fresh(f"{node.input[pos]}_scale"), self.fresh(f"{node.input[pos]}_zp")
        self.inits.append(numpy_helper.from_array(product, scale))
        self.inits.append(numpy_helper.from_array(np.zeros(product.shape, np.int32), zp))
        return self.dq(node.input[pos], scale, zp, axis=0)

    def value(self, name: str) -> np.ndarray:
        if name not in self.consts:
            raise ValueError(f"{name!r} is not a constant")
        return numpy_helper.to_array(self.consts[name])

    def rewrite(self, node: onnx.NodeProto) -> None:
        kind = _QLINEAR.get(node.op_type)
        if node.op_type == "QuantizeLinear":
            self.quant[node.output[0]] = (node.input[1], _at(node, 2))
        if node.op_type == "QLinearConcat":
            self.concat(node)
        elif kind is not None and node.domain in ("", "ai.onnx", "com.microsoft"):
            self.qlinear(node, *kind)
        elif node.op_type in _MOVES and node.input and node.input[0] in self.quant:
            scale, zp = self.quant[node.input[0]]
            inputs = [self.dq(node.input[0], scale, zp), *node.input[1:]]
            y = self.fresh(node.output[0])
            self.nodes.append(_copy(node, inputs, y))
            self.q(y, scale, zp, node.output[0])
        else:
            self.nodes.append(node)

    def qlinear(
        self, node: onnx.NodeProto, op: str, operands: tuple[int, ...], out: int, bias: int
    ) -> None:
        ins = list(node.input) + [""] * 10
        if not ins[out]:
            raise ValueError(f"{node.op_type} {node.name!r} has a float output")
        inputs = []
        for pos in operands:
            axis = 0 if pos == 3 and op == "Conv" else None
            if pos == 3 and op in ("Gemm", "MatMul"):
                trans_b = any(a.name == "transB" and a.i for a in node.attribute)
                axis = 0 if trans_b else 1
            inputs.append(self.dq(ins[pos], ins[pos + 1], ins[pos + 2], axis))
        if bias >= 0 and ins[bias]:
            inputs.append(self.bias(node, bias, (ins[1], ins[4])))
        y = self.fresh(node.output[0])
        self.nodes.append(_copy(node, inputs, y, op_type=op))
        self.q(y, ins[out], ins[out + 1], node.output[0])

    def concat(self, node: onnx.NodeProto) -> None:
        ins = list(node.input)
        inputs = [self.dq(*ins[k : k + 3]) for k in range(2, len(ins), 3)]
        y = self.fresh(node.output[0])
        self.nodes.append(_copy(node, inputs, y, op_type="Concat"))
        self.q(y, ins[0], ins[1], node.output[0])


def _at(node: onnx.NodeProto, pos: int) -> str:
    return node.input[pos] if len(node.input) > pos else ""


def _copy(node: onnx.NodeProto, inputs: list[str], output: str, op_type: str = "") -> Any:
    attrs = {
        a.name: helper.get_attribute_value(a)
        for a in node.attribute
        if a.name not in _DROPPED_ATTRIBUTES
    }
    if any(a.name == "channels_last" and a.i for a in node.attribute):
        raise ValueError(f"{node.op_type} {node.name!r} with channels_last=1")
    return helper.make_node(
        op_type or node.op_type, inputs, [output], name=node.name or output, **attrs
    )


def has_qoperators(model: onnx.ModelProto) -> bool:
    return any(n.op_type in _QLINEAR or n.op_type == "QLinearConcat" for n in model.graph.node)


def to_qdq(model: onnx.ModelProto, fail: Callable[[str], Exception]) -> onnx.ModelProto:
    """`model` with its QOperator nodes in QDQ form; `fail` makes the error for a node it cannot
    rewrite (a float output, channels_last, a non-constant scale)."""
    r = _Rewriter(model)
    for node in model.graph.node:
        try:
            r.rewrite(node)
        except ValueError as e:
            raise fail(str(e)) from None
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(r.nodes)
    out.graph.initializer.extend(r.inits)
    return out
