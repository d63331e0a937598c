"""The state of one ONNX import: the IR under construction and what each ONNX value became.

QDQ form: every float operator reads DequantizeLinear outputs and its output is read only by
QuantizeLinear nodes (through at most one Relu or Clip). An activation (a QuantizeLinear output)
becomes one int8 IR tensor with the QuantizeLinear's scale and zero point; the DequantizeLinear of
it is an alias of that tensor; the DequantizeLinear of a constant is a quantized constant
(`QConst`). uint8 activations become int8 with the zero point lowered by 128: q - 128 with
zero point zp - 128 is the same real value, and every requantisation reads only q - zp.

Layout: a rank-4 ONNX value (NCHW) is stored NHWC (`Value.nhwc`); weights are re-laid out here,
once. A Flatten or Reshape of an NHWC map into a matrix stores its rows in HWC order
(`Value.chw`); the Gemm or MatMul that reads it permutes its weight columns instead, and any other
reader gets a TRANSPOSE to NCHW order first (`Context.value`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from mcugen.errors import ModelError, UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.numerics import ORT

#: NCHW axis -> NHWC axis, and the permutations between the two.
NHWC_AXIS = (0, 3, 1, 2)
TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)
#: TFLite fused activations (ActivationFunctionType).
ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 0, 1, 2, 3
_CLIP_ACTS = {(0.0, 6.0): ACT_RELU6, (-1.0, 1.0): ACT_RELU_N1_TO_1, (0.0, np.inf): ACT_RELU}


@dataclass(frozen=True)
class Quant:
    """An activation's per-tensor quantization, int8 (uint8 already shifted)."""

    scale: float
    zero_point: int


@dataclass(frozen=True)
class Value:
    """What an ONNX activation became: IR tensor `index`, ONNX (logical) shape `shape`."""

    index: int
    shape: tuple[int, ...]
    quant: Quant
    nhwc: bool = False
    #: (C, H, W) when this matrix holds an NCHW map's rows in HWC order; `source` is the map
    chw: tuple[int, int, int] | None = None
    source: int = -1

    @property
    def ir_shape(self) -> tuple[int, ...]:
        if self.nhwc:
            return tuple(self.shape[a] for a in TO_NHWC)
        if self.chw is not None:
            return (self.shape[0], int(np.prod(self.chw)))
        return self.shape


@dataclass(frozen=True)
class QConst:
    """A DequantizeLinear of a constant: integer data, scales and zero points along `axis`."""

    data: np.ndarray
    scales: np.ndarray
    zero_points: np.ndarray
    axis: int

    def real(self) -> np.ndarray:
        shape = [1] * self.data.ndim
        if self.scales.size > 1:
            shape[self.axis] = -1
        s, z = self.scales.reshape(shape), self.zero_points.reshape(shape)
        return (self.data.astype(np.float64) - z) * s


@dataclass(frozen=True)
class Spec:
    """Where a float operator's result goes: its quantization, the fused activation, and the
    ONNX names that all mean the quantized result."""

    quant: Quant
    act: int
    names: tuple[str, ...]


class Context:
    def __init__(self, model: onnx.ModelProto, source: str, numerics: str = ORT) -> None:
        self.graph = model.graph
        self.source = source
        #: mcugen/model/numerics.py: "ort" makes the operators whose output onnxruntime
        #: quantizes directly (AveragePool, Softmax, Sigmoid) write the output's quantization
        self.ort = numerics == ORT
        #: the default domain's opset (Softmax's axis and meaning changed at 13)
        self.opset = max(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0
        )
        self.b = GraphBuilder(self.graph.name or "onnx")
        self.consts: dict[str, np.ndarray] = {}
        self.qconsts: dict[str, QConst] = {}
        self.values: dict[str, Value] = {}
        self.done: set[int] = set()
        self.consumers: dict[str, list[int]] = {}
        self.outputs = {o.name for o in self.graph.output}
        for i, node in enumerate(self.graph.node):
            for name in node.input:
                self.consumers.setdefault(name, []).append(i)
        for init in self.graph.initializer:
            if init.data_location == onnx.TensorProto.EXTERNAL:
                raise self.fail(
                    f"initializer {init.name!r} keeps its data in an external file",
                    hint="load it from its file (mcugen reads the data file beside it) or save "
                    "the weights inside the .onnx file",
                )
            self.consts[init.name] = numpy_helper.to_array(init)

    # --- errors ------------------------------------------------------------------------------

    def fail(self, what: str, node: onnx.NodeProto | None = None, hint: str = "") -> ModelError:
        return ModelError(what, where=self.where(node), hint=hint)

    def refuse(self, what: str, node: onnx.NodeProto | None, hint: str = "") -> UnsupportedError:
        return UnsupportedError(what, where=self.where(node), hint=hint)

    def where(self, node: onnx.NodeProto | None) -> str:
        if node is None:
            return self.source
        return f"{self.source}, node {node.name or node.output[0]!r} ({node.op_type})"

    # --- reading inputs ----------------------------------------------------------------------

    def const(self, name: str, node: onnx.NodeProto) -> np.ndarray:
        if name not in self.consts:
            raise self.refuse(f"input {name!r} must be a constant", node)
        return self.consts[name]

    def qconst(self, name: str, node: onnx.NodeProto) -> QConst:
        if name not in self.qconsts:
            raise self.refuse(
                f"input {name!r} must be a quantized constant (a DequantizeLinear of an "
                "initializer)",
                node,
                "quantize the model with onnxruntime's quantize_static (QDQ)",
            )
        return self.qconsts[name]

    def stored(self, name: str, node: onnx.NodeProto | None) -> Value:
        """The activation `name` as it is (a matrix in HWC row order may not exist yet)."""
        if name not in self.values:
            raise self.refuse(
                f"input {name!r} is not a quantized activation (no QuantizeLinear/"
                "DequantizeLinear pair produces it)",
                node,
                "mcugen imports quantized QDQ models: `mcugen quantize MODEL --data CALIB.npz "
                "-o OUT` makes one",
            )
        return self.values[name]

    def value(self, name: str, node: onnx.NodeProto | None, *, keep_chw: bool = False) -> Value:
        """The activation `name`. A matrix in HWC row order (a Flatten of a map, made only when
        read) is put in NCHW order for readers that need the ONNX order, and is the map's bytes
        for Gemm and MatMul (`keep_chw`), which permute their weight columns."""
        v = self.stored(name, node)
        if v.chw is None or (keep_chw and v.index >= 0):
            return v
        if keep_chw:  # the map's NHWC bytes as a matrix: a RESHAPE (a view)
            t = self.tensor(v.ir_shape, v.quant)
            self.b.op("RESHAPE", [v.source, self.int32(v.ir_shape)], [t], new_shape=v.ir_shape)
            return self._everywhere(v, replace(v, index=t))
        c, h, w = v.chw
        nchw = self.tensor((v.shape[0], c, h, w), v.quant)
        self.b.op("TRANSPOSE", [v.source, self.int32((0, 3, 1, 2))], [nchw])
        flat = self.tensor(v.shape, v.quant)
        self.b.op("RESHAPE", [nchw, self.int32(v.shape)], [flat], new_shape=v.shape)
        return self._everywhere(v, Value(flat, v.shape, v.quant))

    def _everywhere(self, old: Value, new: Value) -> Value:
        """`new` under every name `old` had."""
        for name, v in self.values.items():
            if v is old:
                self.values[name] = new
        return new

    def quant_of(self, node: onnx.NodeProto) -> Quant:
        """The per-tensor quantization a QuantizeLinear or DequantizeLinear `node` names."""
        scale = np.asarray(self.const(node.input[1], node), dtype=np.float32)
        zp = (
            self.const(node.input[2], node)
            if len(node.input) > 2 and node.input[2]
            else np.zeros((), np.uint8)
        )
        if scale.size != 1 or np.asarray(zp).size != 1:
            raise self.refuse("per-channel activation quantization is not supported", node)
        s = float(scale.reshape(()))
        if not (np.isfinite(s) and s > 0):
            raise self.fail(f"activation scale {s} must be finite and positive", node)
        return Quant(s, _int8_zero_point(np.asarray(zp), node, self))

    # --- writing the IR ----------------------------------------------------------------------

    def tensor(self, shape: tuple[int, ...], quant: Quant, name: str | None = None) -> int:
        return self.b.activation(
            shape, "int8", scale=quant.scale, zero_point=quant.zero_point, name=name
        )

    def int32(self, values: Any) -> int:
        return self.b.const(np.asarray(values, dtype=np.int32))

    def output_spec(self, node: onnx.NodeProto) -> Spec:
        """Follow `node`'s float output through at most one Relu/Clip to its QuantizeLinear
        readers; they are folded into `node` (marked done)."""
        y, clip = node.output[0], None
        readers = self.consumers.get(y, [])
        if len(readers) == 1 and y not in self.outputs:
            nxt = self.graph.node[readers[0]]
            if nxt.op_type in ("Relu", "Clip"):
                clip = nxt
                self.done.add(readers[0])
                y = nxt.output[0]
                readers = self.consumers.get(y, [])
        qnodes = [self.graph.node[i] for i in readers]
        if y in self.outputs or not qnodes or any(q.op_type != "QuantizeLinear" for q in qnodes):
            raise self.refuse(
                "the float result is not quantized (read by something else than QuantizeLinear)",
                node,
                "mcugen imports quantized QDQ models: `mcugen quantize MODEL --data CALIB.npz "
                "-o OUT` makes one",
            )
        quants = {self.quant_of(q) for q in qnodes}
        if len(quants) > 1:
            raise self.refuse("the result is quantized twice with different parameters", node)
        self.done.update(readers)
        quant = quants.pop()
        act = ACT_NONE if clip is None else self.activation_of(clip, quant)
        return Spec(quant, act, (y, *(q.output[0] for q in qnodes)))

    def activation_of(self, node: onnx.NodeProto, quant: Quant) -> int:
        """A Relu/Clip before a QuantizeLinear as a TFLite fused activation (the clamp is then
        done in the quantized domain, exactly); a Clip whose bounds contain the quantized range
        is no clamp at all."""
        if node.op_type == "Relu":
            return ACT_RELU
        lo, hi = self.clip_bounds(node)
        if hi >= np.finfo(np.float32).max:
            hi = np.inf
        if (lo, hi) in _CLIP_ACTS:
            return _CLIP_ACTS[(lo, hi)]
        q_lo = quant.scale * (-128 - quant.zero_point)
        q_hi = quant.scale * (127 - quant.zero_point)
        if lo <= q_lo and q_hi <= hi:
            return ACT_NONE
        raise self.refuse(
            f"Clip({lo}, {hi}) is neither ReLU, ReLU6 nor ReLU_N1_TO_1 and cuts into the "
            f"quantized range [{q_lo:.4g}, {q_hi:.4g}]",
            node,
        )

    def clip_bounds(self, node: onnx.NodeProto) -> tuple[float, float]:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        lo, hi = float(attrs.get("min", -np.inf)), float(attrs.get("max", np.inf))
        if len(node.input) > 1 and node.input[1]:
            lo = float(self.const(node.input[1], node))
        if len(node.input) > 2 and node.input[2]:
            hi = float(self.const(node.input[2], node))
        return lo, hi

    def result(self, spec: Spec, shape: tuple[int, ...], *, nhwc: bool = False) -> Value:
        """A new IR tensor for a float operator's quantized result, under all its names."""
        probe = Value(-1, shape, spec.quant, nhwc=nhwc)
        v = Value(self.tensor(probe.ir_shape, spec.quant, spec.names[-1]), shape, spec.quant, nhwc)
        for name in spec.names:
            self.values[name] = v
        return v

    def settle(self, v: Value, spec: Spec, node: onnx.NodeProto) -> None:
        """`v`, the result of an operator without a fused activation, under `spec`'s names,
        requantized to `spec`'s quantization if it has another."""
        if spec.act != ACT_NONE:
            raise self.refuse("a Relu/Clip after this operator is not supported", node)
        v = self.requantized(v, spec.quant)
        for name in spec.names:
            self.values[name] = v

    def requantized(self, v: Value, quant: Quant) -> Value:
        """`v` with quantization `quant`: itself, or a QUANTIZE (requantisation) of it."""
        if v.quant == quant:
            return v
        t = self.tensor(v.ir_shape, quant)
        self.b.op("QUANTIZE", [v.index], [t])
        return Value(t, v.shape, quant, v.nhwc, v.chw, v.source)


def _int8_zero_point(zp: np.ndarray, node: onnx.NodeProto, ctx: Context) -> int:
    if zp.dtype == np.uint8:
        return int(zp.reshape(())) - 128
    if zp.dtype == np.int8:
        return int(zp.reshape(()))
    raise ctx.refuse(f"activations of type {zp.dtype} are not supported (int8 and uint8 are)", node)


def attributes(node: onnx.NodeProto) -> dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
