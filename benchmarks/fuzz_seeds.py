"""The seed models of the fuzzer (benchmarks/fuzz_mutants.py): every model in ../shared/models
(when present), the bundled example, two generated irregular graphs and three small models written
here that cover the operators the others lack."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_write import write_model
from testgraphs import nas_cells, unet

ROOT = Path(__file__).resolve().parents[1]
SHARED_MODELS = ROOT.parent / "shared" / "models"


@dataclass(frozen=True)
class Seed:
    name: str
    data: bytes


def _quant_conv(
    b: GraphBuilder, rng: np.random.Generator, x: int, s_x: float, shape: tuple[int, ...]
) -> tuple[int, int]:
    """Per-channel int8 weights of `shape` (O first) and an int32 bias at s_x * s_w."""
    scales = [float(s) for s in rng.uniform(0.002, 0.01, shape[0])]
    w = b.const(rng.integers(-127, 128, shape, dtype=np.int8), scale=scales, axis=0)
    bias = rng.integers(-3000, 3000, shape[0], dtype=np.int32)
    return w, b.const(bias, scale=[s_x * s for s in scales])


def seed_mlp_int8() -> bytes:
    """FULLY_CONNECTED with bias, fused ReLU, LOGISTIC, TANH, SOFTMAX, MUL, SUB, MAXIMUM, int8."""
    rng = np.random.default_rng(11)
    b = GraphBuilder("mlp_int8")
    x = b.input((2, 12), "int8", scale=0.05, zero_point=4)
    h = b.activation((2, 8), "int8", scale=0.08, zero_point=-20)
    w, bias = _quant_conv(b, rng, x, 0.05, (8, 12))
    b.op("FULLY_CONNECTED", [x, w, bias], [h], fused_activation_function=1)
    sig = b.activation((2, 8), "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [h], [sig])
    th = b.activation((2, 8), "int8", scale=1 / 128, zero_point=0)
    b.op("TANH", [h], [th])
    prod = b.activation((2, 8), "int8", scale=0.004, zero_point=0)
    b.op("MUL", [sig, th], [prod])
    diff = b.activation((2, 8), "int8", scale=0.01, zero_point=3)
    b.op("SUB", [prod, th], [diff])
    big = b.activation((2, 8), "int8", scale=0.01, zero_point=3)
    b.op("MAXIMUM", [diff, b.const(np.full((1, 8), 5, np.int8), scale=0.01, zero_point=3)], [big])
    y = b.activation((2, 8), "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [big], [y], beta=1.0)
    b.output(y)
    return b.tflite()


def seed_float_mix() -> bytes:
    """float32 CONV_2D, DEPTHWISE, MEAN, LEAKY_RELU, HARD_SWISH, RESIZE_BILINEAR, PAD, FC."""
    rng = np.random.default_rng(12)
    b = GraphBuilder("float_mix")
    x = b.input((1, 6, 6, 3), "float32")
    c = b.activation((1, 6, 6, 4), "float32")
    w = b.const(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    b.op("CONV_2D", [x, w, b.const(rng.standard_normal(4).astype(np.float32))], [c], padding=0,
         stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
         fused_activation_function=3)  # fmt: skip
    d = b.activation((1, 3, 3, 8), "float32")
    dw = b.const(rng.standard_normal((1, 3, 3, 8)).astype(np.float32))
    b.op("DEPTHWISE_CONV_2D", [c, dw, b.const(np.zeros(8, np.float32))], [d], padding=0,
         stride_h=2, stride_w=2, depth_multiplier=2, dilation_h_factor=1,
         dilation_w_factor=1)  # fmt: skip
    lk = b.activation((1, 3, 3, 8), "float32")
    b.op("LEAKY_RELU", [d], [lk], alpha=0.2)
    hs = b.activation((1, 3, 3, 8), "float32")
    b.op("HARD_SWISH", [lk], [hs])
    up = b.activation((1, 5, 5, 8), "float32")
    b.op(
        "RESIZE_BILINEAR", [hs, b.const(np.array([5, 5], np.int32))], [up], half_pixel_centers=True
    )
    pad = b.activation((1, 6, 7, 8), "float32")
    b.op("PAD", [up, b.const(np.array([[0, 0], [1, 0], [1, 1], [0, 0]], np.int32))], [pad])
    m = b.activation((1, 8), "float32")
    b.op("MEAN", [pad, b.const(np.array([1, 2], np.int32))], [m], keep_dims=False)
    y = b.activation((1, 3), "float32")
    fw = b.const(rng.standard_normal((3, 8)).astype(np.float32))
    b.op("FULLY_CONNECTED", [m, fw, b.const(np.zeros(3, np.float32))], [y])
    b.output(y)
    return b.tflite()


def seed_shapes_int8() -> bytes:
    """PAD, TRANSPOSE, STRIDED_SLICE, CONCATENATION, SPLIT, RESHAPE, MEAN, MAX_POOL, QUANTIZE."""
    rng = np.random.default_rng(13)
    b = GraphBuilder("shapes_int8")
    q: dict[str, Any] = dict(scale=0.1, zero_point=-5)
    x = b.input((1, 4, 4, 6), "int8", **q)
    p = b.activation((1, 6, 6, 6), "int8", **q)
    b.op("PAD", [x, b.const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))], [p])
    t = b.activation((1, 6, 6, 6), "int8", **q)
    b.op("TRANSPOSE", [p, b.const(np.array([0, 2, 1, 3], np.int32))], [t])
    s = b.activation((1, 3, 3, 6), "int8", **q)
    idx = [b.const(np.array(v, np.int32)) for v in ([0, 0, 1, 0], [1, 6, 6, 6], [1, 2, 2, 1])]
    b.op("STRIDED_SLICE", [t, *idx], [s])
    mp = b.activation((1, 3, 3, 6), "int8", **q)
    b.op("MAX_POOL_2D", [s], [mp], padding=0, stride_h=1, stride_w=1, filter_height=2,
         filter_width=2)  # fmt: skip
    cat = b.activation((1, 3, 3, 12), "int8", **q)
    b.op("CONCATENATION", [s, mp], [cat], axis=3)
    halves = [b.activation((1, 3, 3, 6), "int8", **q) for _ in range(2)]
    b.op("SPLIT", [b.const(np.array([3], np.int32)), cat], halves, num_splits=2)
    w, bias = _quant_conv(b, rng, halves[1], 0.1, (4, 1, 1, 6))
    conv = b.activation((1, 3, 3, 4), "int8", scale=0.05, zero_point=0)
    b.op("CONV_2D", [halves[1], w, bias], [conv], padding=1, stride_h=1, stride_w=1,
         dilation_h_factor=1, dilation_w_factor=1, fused_activation_function=0)  # fmt: skip
    mean = b.activation((1, 1, 1, 4), "int8", scale=0.04, zero_point=2)
    b.op("MEAN", [conv, b.const(np.array([1, 2], np.int32))], [mean], keep_dims=True)
    flat = b.activation((1, 4), "int8", scale=0.04, zero_point=2)
    b.op("RESHAPE", [mean, b.const(np.array([1, 4], np.int32))], [flat])
    y = b.activation((1, 4), "int8", scale=0.02, zero_point=-1)
    b.op("QUANTIZE", [flat], [y])
    b.output(y, halves[0])
    return b.tflite()


def seed_misc_int8() -> bytes:
    """HARD_SWISH, LEAKY_RELU, PRELU, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, TRANSPOSE_CONV, SQUEEZE,
    EXPAND_DIMS, SPLIT_V, MINIMUM, UNPACK, PACK and DEQUANTIZE, int8."""
    rng = np.random.default_rng(14)
    b = GraphBuilder("misc_int8")
    q: dict[str, Any] = dict(scale=0.04, zero_point=-10)
    x = b.input((1, 4, 4, 4), "int8", scale=0.05, zero_point=-3)
    hs = b.activation((1, 4, 4, 4), "int8", **q)
    b.op("HARD_SWISH", [x], [hs])
    lk = b.activation((1, 4, 4, 4), "int8", **q)
    b.op("LEAKY_RELU", [hs], [lk], alpha=0.1)
    pr = b.activation((1, 4, 4, 4), "int8", **q)
    alpha = b.const(rng.integers(-50, 50, (1, 1, 4), dtype=np.int8), scale=0.01)
    b.op("PRELU", [lk, alpha], [pr])
    block = b.const(np.array([2, 2], np.int32))
    s2b = b.activation((4, 2, 2, 4), "int8", **q)
    b.op("SPACE_TO_BATCH_ND", [pr, block, b.const(np.zeros((2, 2), np.int32))], [s2b])
    b2s = b.activation((1, 4, 4, 4), "int8", **q)
    b.op("BATCH_TO_SPACE_ND", [s2b, block, b.const(np.zeros((2, 2), np.int32))], [b2s])
    w, bias = _quant_conv(b, rng, b2s, 0.04, (2, 3, 3, 4))
    tc = b.activation((1, 8, 8, 2), "int8", scale=0.1, zero_point=0)
    shape = b.const(np.array([1, 8, 8, 2], np.int32))
    b.op("TRANSPOSE_CONV", [shape, w, b2s, bias], [tc], padding=0, stride_h=2, stride_w=2)
    sq = b.activation((8, 8, 2), "int8", scale=0.1, zero_point=0)
    b.op("SQUEEZE", [tc], [sq], squeeze_dims=[0])
    ex = b.activation((1, 8, 8, 2), "int8", scale=0.1, zero_point=0)
    b.op("EXPAND_DIMS", [sq, b.const(np.array([0], np.int32))], [ex])
    parts = [b.activation((1, 8, 8, 1), "int8", scale=0.1, zero_point=0) for _ in range(2)]
    sizes, axis = b.const(np.array([1, 1], np.int32)), b.const(np.array([3], np.int32))
    b.op("SPLIT_V", [ex, sizes, axis], parts, num_splits=2)
    mn = b.activation((1, 8, 8, 1), "int8", scale=0.1, zero_point=0)
    b.op("MINIMUM", parts, [mn])
    un = b.activation((1, 8, 8), "int8", scale=0.1, zero_point=0)
    b.op("UNPACK", [mn], [un], num=1, axis=3)
    pk = b.activation((1, 1, 8, 8), "int8", scale=0.1, zero_point=0)
    b.op("PACK", [un], [pk], values_count=1, axis=0)
    y = b.activation((1, 1, 8, 8), "float32")
    b.op("DEQUANTIZE", [pk], [y])
    b.output(y)
    return b.tflite()


def seeds(models: Path | None = SHARED_MODELS) -> list[Seed]:
    """The seed corpus, in a fixed order."""
    found = [
        Seed("tiny_cnn_int8", (ROOT / "examples" / "tiny_cnn_int8.tflite").read_bytes()),
        Seed("mlp_int8", seed_mlp_int8()),
        Seed("float_mix", seed_float_mix()),
        Seed("shapes_int8", seed_shapes_int8()),
        Seed("misc_int8", seed_misc_int8()),
        Seed("nas_cells1", write_model(nas_cells(1, cells=1))),
        Seed("unet2", write_model(unet(1, depth=2, hw=8))),
    ]
    if models is not None and models.is_dir():
        found += [Seed(p.stem, p.read_bytes()) for p in sorted(models.glob("*.tflite"))]
    return found
