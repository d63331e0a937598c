"""What `--onnx-numerics ort` (not built yet, docs/onnx.md) would have to compute: onnxruntime's
output stage for Conv, depthwise Conv and Gemm is round_half_even(float32(acc) * s) + zp with
s = x_scale * w_scale / y_scale in float32 (MLAS's requantisation; the same in float64 passes
too on these data). A numpy model of that reproduces onnxruntime on every element of the
one-operator models, where mcugen's fixed-point requantisation (TFLite's) agrees on 99.5-99.8 %
(test_onnx_import.py): the difference is the output stage alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from mcugen.model.load import load_model
from support.onnx_models import onnx_samples, ort_outputs, quantized


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
