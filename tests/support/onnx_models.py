"""Small float ONNX networks built with `onnx.helper`, quantized by onnxruntime's static quantizer
(QDQ form) from random calibration data, and the onnxruntime reference run (tests/onnx/)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from mcugen.model.ir import Graph
from mcugen.model.onnx_import import NHWC_METADATA


@dataclass
class Net:
    """A float network under construction: nodes, initializers and the last value's name."""

    seed: int
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    inits: list[onnx.TensorProto] = field(default_factory=list)
    count: int = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, arr: np.ndarray, stem: str = "w") -> str:
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def node(self, op: str, inputs: list[str], **attrs: Any) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed * 1000 + self.count)

    def conv(
        self,
        x: str,
        cin: int,
        cout: int,
        k: tuple[int, int],
        *,
        stride: int = 1,
        group: int = 1,
        pads: tuple[int, int, int, int] | None = None,
        act: str = "",
    ) -> str:
        rng = self.rng()
        fan_in = cin // group * k[0] * k[1]
        w = rng.normal(0, 1.5 / np.sqrt(fan_in), (cout, cin // group, *k)).astype(np.float32)
        b = rng.normal(0, 0.1, cout).astype(np.float32)
        if pads is None:
            pads = (k[0] // 2, k[1] // 2, (k[0] - 1) // 2, (k[1] - 1) // 2)
        y = self.node(
            "Conv",
            [x, self.const(w), self.const(b, "b")],
            kernel_shape=list(k),
            strides=[stride, stride],
            pads=list(pads),
            group=group,
        )
        return self.activation(y, act)

    def activation(self, y: str, act: str) -> str:
        if act == "relu":
            return self.node("Relu", [y])
        if act == "relu6":
            lo, hi = (
                self.const(np.array(0, np.float32), "lo"),
                self.const(np.array(6, np.float32), "hi"),
            )
            return self.node("Clip", [y, lo, hi])
        return y

    def gemm(self, x: str, k: int, n: int) -> str:
        rng = self.rng()
        w = rng.normal(0, 1.5 / np.sqrt(k), (n, k)).astype(np.float32)
        b = rng.normal(0, 0.1, n).astype(np.float32)
        return self.node("Gemm", [x, self.const(w), self.const(b, "b")], transB=1)

    def model(self, shape: tuple[int, ...], x: str, y: str, out_shape: tuple[int, ...]) -> bytes:
        graph = helper.make_graph(
            self.nodes,
            "net",
            [helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape))],
            [helper.make_tensor_value_info(y, TensorProto.FLOAT, list(out_shape) or None)],
            self.inits,
        )
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        m = onnx.shape_inference.infer_shapes(m)  # the output's shape when not given
        onnx.checker.check_model(m)
        return m.SerializeToString()


def ds_cnn(seed: int = 0) -> tuple[bytes, tuple[int, ...]]:
    """A DS-CNN like KWS: a strided 2-D conv, two depthwise + pointwise pairs, average pool over
    the whole map, flatten, gemm, softmax."""
    n = Net(seed)
    x = "input"
    y = n.conv(x, 1, 16, (5, 3), stride=2, act="relu")
    for _ in range(2):
        y = n.conv(y, 16, 16, (3, 3), group=16, act="relu")
        y = n.conv(y, 16, 16, (1, 1), act="relu")
    y = n.node("AveragePool", [y], kernel_shape=[10, 5])
    y = n.node("Flatten", [y], axis=1)
    y = n.node("Softmax", [n.gemm(y, 16, 6)], axis=-1)
    return n.model((1, 1, 20, 10), x, y, (1, 6)), (1, 1, 20, 10)


def mobilenet_blocks(seed: int = 0) -> tuple[bytes, tuple[int, ...]]:
    """MobileNetV1 blocks: conv s2 + ReLU6, three depthwise/pointwise pairs (one strided), global
    average pool, flatten, gemm."""
    n = Net(seed)
    y = n.conv("input", 3, 8, (3, 3), stride=2, act="relu6")
    for stride, cin, cout in ((1, 8, 16), (2, 16, 16), (1, 16, 24)):
        y = n.conv(y, cin, cin, (3, 3), stride=stride, group=cin, act="relu6")
        y = n.conv(y, cin, cout, (1, 1), act="relu6")
    y = n.node("Flatten", [n.node("GlobalAveragePool", [y])], axis=1)
    return n.model((1, 3, 16, 16), "input", n.gemm(y, 24, 5), (1, 5)), (1, 3, 16, 16)


def resnet(seed: int = 0) -> tuple[bytes, tuple[int, ...]]:
    """A small ResNet: a stem conv, two residual blocks (conv-relu-conv, Add, relu), a per-channel
    Mul, max pool, a flatten of a 4x4x8 map (NCHW order) into a gemm, sigmoid."""
    n = Net(seed)
    y = n.conv("input", 3, 8, (3, 3), act="relu")
    for _ in range(2):
        h = n.conv(y, 8, 8, (3, 3), act="relu")
        h = n.conv(h, 8, 8, (3, 3))
        y = n.node("Relu", [n.node("Add", [h, y])])
    gains = n.rng().uniform(0.5, 1.5, (1, 8, 1, 1)).astype(np.float32)
    y = n.node("Mul", [y, n.const(gains, "g")])
    y = n.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = n.node("Flatten", [y], axis=1)
    y = n.node("Sigmoid", [n.gemm(y, 8 * 4 * 4, 3)])
    return n.model((1, 3, 8, 8), "input", y, (1, 3)), (1, 3, 8, 8)


def inception(seed: int = 0) -> tuple[bytes, tuple[int, ...]]:
    """An Inception-like cell: 1x1, 3x3 and 3x3 max pool + 1x1 branches concatenated on
    channels, a 1x1 conv, global average pool, gemm, softmax."""
    n = Net(seed)
    x = n.conv("input", 4, 8, (3, 3), act="relu")
    a = n.conv(x, 8, 6, (1, 1), act="relu")
    b = n.conv(n.conv(x, 8, 4, (1, 1), act="relu"), 4, 6, (3, 3), act="relu")
    c = n.node("MaxPool", [x], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    c = n.conv(c, 8, 4, (1, 1), act="relu")
    y = n.node("Concat", [a, b, c], axis=1)
    y = n.conv(y, 16, 12, (1, 1), act="relu")
    y = n.node("Flatten", [n.node("GlobalAveragePool", [y])], axis=1)
    y = n.node("Softmax", [n.gemm(y, 12, 4)], axis=1)
    return n.model((1, 4, 10, 10), "input", y, (1, 4)), (1, 4, 10, 10)


def unet(seed: int = 0) -> tuple[bytes, tuple[int, ...]]:
    """A U-Net step: a strided conv, a nearest x2 Resize (as PyTorch's Upsample exports it),
    a Concat with the skip, an explicit Pad, a VALID conv, and a Transpose to NHWC at the end."""
    n = Net(seed)
    skip = n.conv("input", 3, 8, (3, 3), act="relu")
    down = n.conv(skip, 8, 8, (3, 3), stride=2, pads=(1, 1, 1, 1), act="relu")
    scales = n.const(np.array([1, 1, 2, 2], np.float32), "scales")
    up = n.node(
        "Resize",
        [down, "", scales],
        mode="nearest",
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )
    y = n.node("Concat", [up, skip], axis=1)
    y = n.node("Pad", [y, n.const(np.array([0, 0, 1, 2, 0, 0, 1, 0], np.int64), "pads")])
    y = n.conv(y, 16, 4, (3, 3), pads=(0, 0, 0, 0), act="relu")
    y = n.node("Transpose", [y], perm=[0, 2, 3, 1])
    return n.model((1, 3, 8, 8), "input", y, ()), (1, 3, 8, 8)


def nhwc_input(seed: int = 0) -> tuple[bytes, tuple[int, ...]]:
    """A Keras model as tf2onnx exports it: an NHWC input transposed to NCHW first."""
    n = Net(seed)
    x = n.node("Transpose", ["input"], perm=[0, 3, 1, 2])
    y = n.conv(n.conv(x, 3, 8, (3, 3), act="relu"), 8, 8, (3, 3), group=8, act="relu")
    y = n.node("Flatten", [n.node("GlobalAveragePool", [y])], axis=1)
    return n.model((1, 8, 8, 3), "input", n.gemm(y, 8, 4), (1, 4)), (1, 8, 8, 3)


def one_operator(kind: str) -> Callable[[int], tuple[bytes, tuple[int, ...]]]:
    """A network of one operator of `kind` (after a 1x1 conv where onnxruntime quantizes the
    operator only after a quantized producer), to measure each operator's agreement."""

    def build(seed: int = 0) -> tuple[bytes, tuple[int, ...]]:
        n = Net(seed)
        shape: tuple[int, ...] = (1, 8, 6, 6)
        x = "input"
        if kind in ("gemm", "softmax", "matmul"):
            shape = (1, 40)
            y = n.gemm(x, 40, 10) if kind == "gemm" else n.node("Softmax", [x], axis=1)
            if kind == "matmul":
                w = n.rng().normal(0, 0.2, (40, 10)).astype(np.float32)
                y = n.node("MatMul", [x, n.const(w)])
        elif kind in ("conv", "depthwise", "grouped"):
            y = n.conv(x, 8, 8, (3, 3), group={"conv": 1, "depthwise": 8, "grouped": 2}[kind])
        elif kind in ("add", "mul", "concat"):
            h = n.conv(x, 8, 8, (1, 1))
            op = {"add": "Add", "mul": "Mul", "concat": "Concat"}[kind]
            y = n.node(op, [h, x], **({"axis": 1} if kind == "concat" else {}))
        elif kind in ("maxpool", "avgpool"):
            op = "MaxPool" if kind == "maxpool" else "AveragePool"
            y = n.node(op, [n.conv(x, 8, 8, (1, 1))], kernel_shape=[2, 2], strides=[2, 2])
        elif kind in ("relu", "relu6"):  # read twice: not fused, a standalone activation
            h = n.conv(x, 8, 8, (3, 3))
            y = n.node("Add", [n.activation(h, kind), h])
        elif kind == "transpose":  # H and W swapped: a TRANSPOSE in the NHWC layout
            y = n.node("Transpose", [n.conv(x, 8, 8, (1, 1))], perm=[0, 1, 3, 2])
        elif kind == "flatten_add":  # a flattened map read by other than a Gemm: a TRANSPOSE
            f = n.node("Flatten", [n.conv(x, 8, 8, (1, 1))], axis=1)
            y = n.node("Add", [f, f])
        else:
            y = n.node({"gap": "GlobalAveragePool", "sigmoid": "Sigmoid"}[kind], [x])
        return n.model(shape, x, y, ()), shape

    return build


ONE_OPERATOR = (
    "conv",
    "depthwise",
    "grouped",
    "gemm",
    "matmul",
    "add",
    "mul",
    "concat",
    "maxpool",
    "avgpool",
    "gap",
    "softmax",
    "sigmoid",
    "relu",
    "relu6",
    "flatten_add",
    "transpose",
)

NETWORKS: dict[str, Callable[[int], tuple[bytes, tuple[int, ...]]]] = {
    "ds_cnn": ds_cnn,
    "mobilenet": mobilenet_blocks,
    "resnet": resnet,
    "inception": inception,
    "unet": unet,
    "nhwc_input": nhwc_input,
    **{f"one_{kind}": one_operator(kind) for kind in ONE_OPERATOR},
}


class _Calibration:
    """onnxruntime's CalibrationDataReader protocol over seeded normal samples."""

    def __init__(self, shape: tuple[int, ...], samples: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.batches: Iterator[dict[str, np.ndarray]] = iter(
            {"input": rng.normal(0, 1, shape).astype(np.float32)} for _ in range(samples)
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)

    def rewind(self) -> None:  # pragma: no cover - the quantizer reads once
        pass


def quantized(
    net: str, folder: Path, *, per_channel: bool, activations: str, seed: int = 0, form: str = "qdq"
) -> tuple[Path, tuple[int, ...]]:
    """`net` quantized in QDQ form (or `form` "qoperator": QLinearConv, ...; int8 weights;
    `activations` "int8" or "uint8"), written to `folder`; returns its path and input shape."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    model, shape = NETWORKS[net](seed)
    fp = folder / f"{net}_float.onnx"
    fp.write_bytes(model)
    logging.disable(logging.WARNING)  # its advice to run onnxruntime's pre-processing first
    out = folder / f"{net}_{activations}_{'pc' if per_channel else 'pt'}_{form}.onnx"
    quantize_static(
        str(fp),
        str(out),
        _Calibration(shape, 16, seed + 1),
        quant_format=QuantFormat.QDQ if form == "qdq" else QuantFormat.QOperator,
        per_channel=per_channel,
        activation_type=QuantType.QInt8 if activations == "int8" else QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    logging.disable(logging.NOTSET)
    return out, shape


def ort_outputs(path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's CPU outputs (default graph optimisations) for float `inputs`."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return [np.asarray(sess.run(None, {name: x})[0]) for x in inputs]


@dataclass(frozen=True)
class Agreement:
    """mcugen's quantized outputs against onnxruntime's, in output steps (LSB)."""

    elements: int
    equal: int
    max_abs_lsb: int

    @property
    def equal_percent(self) -> float:
        return 100.0 * self.equal / self.elements


def onnx_samples(
    graph: Graph, samples: int, seed: int
) -> tuple[list[list[np.ndarray]], list[np.ndarray]]:
    """Seeded int8 inputs in mcugen's layout (NHWC) and the same values as onnxruntime's float
    NCHW inputs (exactly representable, so its QuantizeLinear gives them back)."""
    t = graph.tensors[graph.inputs[0]]
    assert t.quant is not None
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for _ in range(samples):
        q = rng.integers(-128, 128, t.shape, dtype=np.int8)
        real = (q.astype(np.float32) - t.quant.zero_point) * np.float32(t.quant.scale)
        ours.append([q])
        nhwc = t.name in graph.metadata[NHWC_METADATA].decode().split(",")
        theirs.append(real.transpose(0, 3, 1, 2) if nhwc else real)
    return ours, theirs


def agreement(graph: Graph, ours: list[list[np.ndarray]], theirs: list[np.ndarray]) -> Agreement:
    """Compare mcugen's int8 outputs with onnxruntime's dequantized float outputs."""
    t = graph.tensors[graph.outputs[0]]
    assert t.quant is not None
    nhwc = t.name in graph.metadata[NHWC_METADATA].decode().split(",")
    total = equal = worst = 0
    for o, r in zip(ours, theirs, strict=True):
        q = o[0].astype(np.int64) - t.quant.zero_point
        if nhwc:
            q = q.transpose(0, 3, 1, 2)
        ref = np.round(r.astype(np.float64) / np.float32(t.quant.scale)).astype(np.int64)
        diff = np.abs(q.reshape(ref.shape) - ref)
        total += diff.size
        equal += int((diff == 0).sum())
        worst = max(worst, int(diff.max(initial=0)))
    return Agreement(total, equal, worst)


def host_agreement(path: Path, samples: int = 20, seed: int = 0) -> tuple[int, int]:
    """(elements, elements equal to onnxruntime's) of the host build with ort numerics, over
    `samples` seeded inputs."""
    import tempfile

    from mcugen.boards import load_board, resolve_target
    from mcugen.firmware.compile import build
    from mcugen.link.host_run import run_host
    from mcugen.model.load import load_model
    from mcugen.pipeline import generate

    graph = load_model(path)
    ours_in, theirs_in = onnx_samples(graph, samples, seed=seed)
    gen = generate(graph)
    with tempfile.TemporaryDirectory(prefix="mcugen-ort-") as tmp:
        result = build(gen, resolve_target(load_board("host"), emulate=False), Path(tmp) / "p")
        ours = run_host(result.executable, gen.graph, ours_in).outputs
    found = agreement(graph, ours, ort_outputs(path, theirs_in))
    return found.elements, found.equal
