"""`--onnx-numerics ort` (the default for ONNX models, docs/onnx.md): mcugen's C runtime gives
onnxruntime's outputs on every element, on the host, for every test network and operator in
both quantizations (tests/qemu/test_onnx_twin.py does it on the F767 twin).

Also what it computes: onnxruntime's output stage for Conv, depthwise Conv and Gemm is
round_half_even(float32(acc) * s) + zp with s = x_scale * w_scale / y_scale in float32 (MLAS's
requantisation); a numpy model of that reproduces onnxruntime on every element of the
one-operator models, where mcugen's fixed-point requantisation (TFLite's) agrees on 99.5-99.8 %
(test_onnx_import.py): the difference is the output stage alone. The tables mcugen builds for
Sigmoid and requantisations equal onnxruntime's QLinearSigmoid and QuantizeLinear on all 256
inputs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mcugen.codegen.lower import fields, lower
from mcugen.model.builder import GraphBuilder
from mcugen.model.load import load_model
from mcugen.model.numerics import NUMERICS_METADATA, float_nodes_of
from support.onnx_models import ONE_OPERATOR, host_agreement, onnx_samples, ort_outputs, quantized

NETWORKS = ("ds_cnn", "mobilenet", "resnet", "inception", "unet", "nhwc_input")


class _Layer:
    """The one Conv or Gemm of a quantized one-operator model, read from its QDQ nodes."""

    def __init__(self, path: Path) -> None:
        m = onnx.load(str(path))
        init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
        nodes = list(m.graph.node)
        op = next(n for n in nodes if n.op_type in ("Conv", "Gemm"))
        q = {n.input[0]: n for n in nodes if n.op_type == "QuantizeLinear"}
        dq = {n.output[0]: n for n in nodes if n.op_type == "DequantizeLinear"}
        self.kind, self.attrs = op.op_type, {a.name: a for a in op.attribute}
        self.x_scale, self.x_zp = init[q["input"].input[1]], init[q["input"].input[2]]
        self.y_scale, self.y_zp = init[q[op.output[0]].input[1]], init[q[op.output[0]].input[2]]
        self.w = init[dq[op.input[1]].input[0]].astype(np.int64)
        self.w_scale = init[dq[op.input[1]].input[1]].astype(np.float32)
        self.b = init[dq[op.input[2]].input[0]].astype(np.int64)
        info = np.iinfo(self.y_zp.dtype)
        self.range = (int(info.min), int(info.max))

    def accumulators(self, x: np.ndarray) -> np.ndarray:
        qx = np.clip(np.rint(x / self.x_scale) + int(self.x_zp), *self.range).astype(np.int64)
        qx -= int(self.x_zp)
        if self.kind == "Gemm":
            return qx @ self.w.T + self.b
        group = self.attrs["group"].i
        m, cg, kh, kw = self.w.shape
        h, w = x.shape[2:]
        xp = np.pad(qx, ((0, 0), (0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2)))
        acc = np.zeros((1, m, h, w), np.int64) + self.b.reshape(1, -1, 1, 1)
        for o in range(m):
            first = o // (m // group) * cg
            for i in range(cg):
                for dy in range(kh):
                    for dx in range(kw):
                        acc[0, o] += (
                            self.w[o, i, dy, dx] * xp[0, first + i, dy : dy + h, dx : dx + w]
                        )
        return acc

    def float_requantized(self, x: np.ndarray) -> np.ndarray:
        scale = (np.float32(self.x_scale) * self.w_scale) / np.float32(self.y_scale)
        acc = self.accumulators(x)
        if acc.ndim == 4:
            scale = scale.reshape(1, -1, 1, 1)
        y = np.rint(acc.astype(np.float32) * scale.astype(np.float32)) + int(self.y_zp)
        return np.clip(y, *self.range)


@pytest.mark.parametrize("kind", ["conv", "depthwise", "gemm"])
@pytest.mark.parametrize("activations", ["int8", "uint8"])
def test_float_requantisation_is_onnxruntime_bit_for_bit(
    kind: str, activations: str, tmp_path: Path
) -> None:
    path, _ = quantized(f"one_{kind}", tmp_path, per_channel=True, activations=activations)
    layer = _Layer(path)
    _, inputs = onnx_samples(load_model(path), 10, seed=0)
    for x, ref in zip(inputs, ort_outputs(path, inputs), strict=True):
        theirs = np.rint(ref / layer.y_scale) + int(layer.y_zp)
        np.testing.assert_array_equal(layer.float_requantized(x), theirs)


@pytest.mark.parametrize("net", NETWORKS)
@pytest.mark.parametrize(
    "pc, act, form",
    [
        (True, "uint8", "qdq"),
        (False, "uint8", "qdq"),
        (True, "int8", "qoperator"),
        (False, "int8", "qdq"),
    ],
)
def test_networks_equal_onnxruntime_on_the_host(
    net: str, pc: bool, act: str, form: str, workdir: Path
) -> None:
    """Every element of 200 inputs, where onnxruntime fuses every QDQ group; where it runs
    some in float (int8 QDQ with a fork: the note names them, test_onnx_fusion.py) all but a
    few elements."""
    path, _ = quantized(net, workdir, per_channel=pc, activations=act, form=form)
    elements, equal = host_agreement(path, samples=200)
    if float_nodes_of(load_model(path)):
        assert equal >= 0.995 * elements, (net, pc, act, equal, elements)
    else:
        assert equal == elements, (net, pc, act, form, equal, elements)


@pytest.mark.parametrize("kind", ONE_OPERATOR)
def test_operators_equal_onnxruntime_on_the_host(kind: str, workdir: Path) -> None:
    """Every operator (after a 1x1 conv where onnxruntime quantizes only after one), int8 and
    uint8 activations alternately, per-channel weights."""
    act = ("int8", "uint8")[ONE_OPERATOR.index(kind) % 2]
    path, _ = quantized(f"one_{kind}", workdir, per_channel=True, activations=act)
    elements, equal = host_agreement(path)
    assert equal == elements, (kind, act, equal, elements)


@pytest.mark.parametrize("pc", [True, False])
@pytest.mark.parametrize("act", ["int8", "uint8"])
def test_whole_map_average_pool_is_onnxruntimes_global_pool(
    pc: bool, act: str, workdir: Path
) -> None:
    """onnxruntime's QLinearAveragePool runs a window over the whole unpadded map as its global
    average pool (an int32 sum, one requantisation): the DS-CNN's AveragePool imports as MEAN
    under ort (AVERAGE_POOL_2D's float average agreed on 98.7-98.9 % of 500 inputs), and
    agrees on every element of 300 inputs; under fixed it stays TFLite's AVERAGE_POOL_2D."""
    path, _ = quantized("ds_cnn", workdir, per_channel=pc, activations=act)
    assert "MEAN" in {op.opcode for op in load_model(path).operators}
    assert "AVERAGE_POOL_2D" in {op.opcode for op in load_model(path, numerics="fixed").operators}
    elements, equal = host_agreement(path, samples=300)
    assert equal == elements


@pytest.mark.parametrize("act", ["int8", "uint8"])
def test_grouped_conv_per_tensor_equals_onnxruntime(act: str, workdir: Path) -> None:
    """A grouped convolution with one weight scale for all groups (its import once took the
    scale of the first group only and failed)."""
    path, _ = quantized("one_grouped", workdir, per_channel=False, activations=act)
    elements, equal = host_agreement(path, samples=50)
    assert equal == elements


def _qlinear_sigmoid(x_scale: float, x_zero: int, y_scale: float, y_zero: int) -> np.ndarray:
    """onnxruntime's QLinearSigmoid (uint8) of every input 0..255."""
    import onnxruntime as ort

    inits = [
        numpy_helper.from_array(np.array(v, t), n)
        for v, t, n in [
            (x_scale, np.float32, "xs"),
            (x_zero, np.uint8, "xz"),
            (y_scale, np.float32, "ys"),
            (y_zero, np.uint8, "yz"),
        ]
    ]
    node = helper.make_node(
        "QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft"
    )
    value = helper.make_tensor_value_info
    g = helper.make_graph(
        [node], "g", [value("x", TensorProto.UINT8, [256])], [value("y", TensorProto.UINT8, [256])]
    )
    g.initializer.extend(inits)
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    )
    m.ir_version = 8
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, {"x": np.arange(256, dtype=np.uint8)})[0])


@pytest.mark.parametrize("seed", range(4))
def test_sigmoid_table_is_onnxruntimes(seed: int) -> None:
    """LOGISTIC's table (MLAS's logistic in float32, built at code generation) equals
    QLinearSigmoid on all 256 inputs; stored int8 is the uint8 value less 128."""
    rng = np.random.default_rng(seed)
    xs, ys = float(np.float32(rng.uniform(0.01, 0.2))), float(np.float32(1 / 256))
    xz, yz = int(rng.integers(0, 256)), int(rng.integers(0, 40))
    b = GraphBuilder("sigmoid")
    x = b.input((1, 256), "int8", scale=xs, zero_point=xz - 128)
    y = b.activation((1, 256), "int8", scale=ys, zero_point=yz - 128)
    b.op("LOGISTIC", [x], [y])
    b.output(y)
    graph = b.graph()
    graph = replace(graph, metadata={NUMERICS_METADATA: b"ort"})
    table = fields(lower(graph, graph.operators[0]).params)["table"]
    ours = np.array(table.values, np.int64) + 128  # type: ignore[union-attr]
    np.testing.assert_array_equal(ours, _qlinear_sigmoid(xs, xz, ys, yz))
