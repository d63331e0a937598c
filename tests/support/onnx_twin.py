"""The small ResNet of onnx_models.resnet written as TFLite with GraphBuilder, from the weights
and quantization of its onnxruntime-quantized ONNX file, as a TFLite converter would lay it out
(NHWC, OHWI filters, SAME padding, the Flatten in HWC order): the ONNX importer's twin, built
without it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from mcugen.model.builder import GraphBuilder
from support.convs import pool_window
from support.op_models import SAME, VALID, window_options


class _Reader:
    """The quantized ONNX file's constants and the quantization of each QuantizeLinear output,
    looked up by the float operators' names."""

    def __init__(self, path: Path) -> None:
        m = onnx.load(str(path))
        self.nodes = list(m.graph.node)
        self.init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
        self.dq = {n.output[0]: n for n in self.nodes if n.op_type == "DequantizeLinear"}
        self.q = {n.input[0]: n for n in self.nodes if n.op_type == "QuantizeLinear"}

    def quant(self, float_name: str) -> tuple[float, int]:
        q = self.q[float_name]
        zp = self.init[q.input[2]]
        shift = 128 if zp.dtype == np.uint8 else 0
        return float(self.init[q.input[1]]), int(zp) - shift

    def weight(self, dq_name: str) -> tuple[np.ndarray, np.ndarray]:
        n = self.dq[dq_name]
        return self.init[n.input[0]], np.atleast_1d(self.init[n.input[1]])

    def ops(self, op_type: str) -> list[onnx.NodeProto]:
        return [n for n in self.nodes if n.op_type == op_type]


def resnet_twin(path: Path) -> bytes:
    r = _Reader(path)
    b = GraphBuilder("resnet_twin")
    s, z = r.quant("input")
    x = b.input((1, 8, 8, 3), "int8", scale=s, zero_point=z)
    convs, adds = r.ops("Conv"), r.ops("Add")

    def conv(node: onnx.NodeProto, src: int, relu: bool) -> int:
        w, ws = r.weight(node.input[1])
        bias, _ = r.weight(node.input[2])
        ys, yz = r.quant(node.output[0])
        y = b.activation((1, 8, 8, w.shape[0]), "int8", scale=ys, zero_point=yz)
        in_scale = b.tensors[src].quant.scale  # type: ignore[union-attr]
        wt = b.const(w.transpose(0, 2, 3, 1).copy(), scale=ws, axis=0)
        bt = b.const(bias, scale=np.float32(in_scale) * ws.astype(np.float32))
        b.op("CONV_2D", [src, wt, bt], [y], **window_options(SAME, (1, 1), (1, 1), int(relu)))
        return y

    y = conv(convs[0], x, True)
    for k in range(2):
        h = conv(convs[2 * k + 2], conv(convs[2 * k + 1], y, True), False)
        s, z = r.quant(adds[k].output[0])
        out = b.activation((1, 8, 8, 8), "int8", scale=s, zero_point=z)
        b.op("ADD", [h, y], [out], fused_activation_function=0)
        y = out
    mul = r.ops("Mul")[0]
    g, gs = r.weight(mul.input[1])
    gz = int(r.init[r.dq[mul.input[1]].input[2]])
    shift = 128 if g.dtype == np.uint8 else 0
    gt = b.const(
        (g.astype(np.int16) - shift).astype(np.int8).reshape(1, 1, 1, 8),
        scale=float(gs[0]),
        zero_point=gz - shift,
    )
    s, z = r.quant(mul.output[0])
    m = b.activation((1, 8, 8, 8), "int8", scale=s, zero_point=z)
    b.op("MUL", [y, gt], [m], fused_activation_function=0)
    out_hw, options = pool_window((1, 8, 8, 8), (2, 2), (2, 2), VALID, 0)
    p = b.activation((1, *out_hw, 8), "int8", scale=s, zero_point=z)
    b.op("MAX_POOL_2D", [m], [p], **options)
    flat = b.activation((1, 128), "int8", scale=s, zero_point=z)
    b.op("RESHAPE", [p, b.const(np.array([1, 128], np.int32))], [flat], new_shape=(1, 128))
    gemm = r.ops("Gemm")[0]
    w, ws = r.weight(gemm.input[1])  # (3, 128) over C, H, W: the columns in H, W, C order
    w = w.reshape(3, 8, 4, 4).transpose(0, 2, 3, 1).reshape(3, 128)
    bias, _ = r.weight(gemm.input[2])
    s, z = r.quant(gemm.output[0])
    fc = b.activation((1, 3), "int8", scale=s, zero_point=z)
    flat_scale = np.float32(r.quant(mul.output[0])[0])
    b.op(
        "FULLY_CONNECTED",
        [
            flat,
            b.const(w.copy(), scale=ws, axis=0),
            b.const(bias, scale=flat_scale * ws),
        ],
        [fc],
        fused_activation_function=0,
        weights_format=0,
        keep_num_dims=False,
        asymmetric_quantize_inputs=False,
    )
    sig = b.activation((1, 3), "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [fc], [sig])
    s, z = r.quant(r.ops("Sigmoid")[0].output[0])
    out = b.activation((1, 3), "int8", scale=s, zero_point=z)
    b.op("QUANTIZE", [sig], [out])
    b.output(out)
    return b.tflite()
