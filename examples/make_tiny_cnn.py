"""Writes examples/tiny_cnn_int8.tflite: the bundled default model (mcugen's own, random weights).

A small int8 image classifier with the structure of the MLPerf Tiny models: CONV_2D, a depthwise-
separable block with a residual ADD, average pooling, FULLY_CONNECTED and SOFTMAX.
Run: python examples/make_tiny_cnn.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mcugen.model.builder import GraphBuilder

RELU6 = 3


def conv_weights(
    rng: np.random.Generator, shape: tuple[int, ...]
) -> tuple[np.ndarray, list[float]]:
    w = rng.integers(-127, 128, shape, dtype=np.int8)
    scales = [float(s) for s in rng.uniform(0.002, 0.01, shape[0] if shape[0] > 1 else shape[-1])]
    return w, scales


def build() -> bytes:
    rng = np.random.default_rng(2026)
    b = GraphBuilder("tiny_cnn")
    x = b.input((1, 32, 32, 3), "int8", scale=0.0078125, zero_point=0, name="image")
    s_in = 0.0078125

    def conv(
        inp: int,
        s_x: float,
        shape: tuple[int, int, int, int],
        out_hw: int,
        stride: int,
        s_y: float,
        zp_y: int,
        opcode: str = "CONV_2D",
    ) -> int:
        w, ws = conv_weights(rng, shape)
        axis = 0 if opcode == "CONV_2D" else 3
        wt = b.const(w, scale=ws, zero_point=[0] * len(ws), axis=axis)
        bias = b.const(
            rng.integers(-2000, 2000, len(ws), dtype=np.int32),
            scale=[s_x * s for s in ws],
            zero_point=[0] * len(ws),
        )
        channels = shape[0] if opcode == "CONV_2D" else shape[3]
        y = b.activation((1, out_hw, out_hw, channels), "int8", scale=s_y, zero_point=zp_y)
        opts = dict(
            padding=0,
            stride_w=stride,
            stride_h=stride,
            fused_activation_function=RELU6,
            dilation_w_factor=1,
            dilation_h_factor=1,
        )
        if opcode == "DEPTHWISE_CONV_2D":
            opts["depth_multiplier"] = 1
        b.op(opcode, [inp, wt, bias], [y], **opts)
        return y

    c1 = conv(x, s_in, (8, 3, 3, 3), 16, 2, 0.03, -128)
    d1 = conv(c1, 0.03, (1, 3, 3, 8), 16, 1, 0.04, -128, "DEPTHWISE_CONV_2D")
    p1 = conv(d1, 0.04, (8, 1, 1, 8), 16, 1, 0.03, -128)
    res = b.activation((1, 16, 16, 8), "int8", scale=0.05, zero_point=-128)
    b.op("ADD", [c1, p1], [res], fused_activation_function=0)
    c2 = conv(res, 0.05, (16, 1, 1, 8), 16, 1, 0.05, -128)
    pooled = b.activation((1, 1, 1, 16), "int8", scale=0.05, zero_point=-128)
    b.op(
        "AVERAGE_POOL_2D",
        [c2],
        [pooled],
        padding=1,
        stride_w=16,
        stride_h=16,
        filter_width=16,
        filter_height=16,
        fused_activation_function=0,
    )
    shape = b.const(np.array([1, 16], dtype=np.int32))
    flat = b.activation((1, 16), "int8", scale=0.05, zero_point=-128)
    b.op("RESHAPE", [pooled, shape], [flat], new_shape=[1, 16])
    w, _ = conv_weights(rng, (10, 16))
    fc_w = b.const(w, scale=0.01)
    fc_b = b.const(rng.integers(-500, 500, 10, dtype=np.int32), scale=0.05 * 0.01)
    logits = b.activation((1, 10), "int8", scale=0.1, zero_point=10)
    b.op("FULLY_CONNECTED", [flat, fc_w, fc_b], [logits], fused_activation_function=0)
    probs = b.activation((1, 10), "int8", scale=1 / 256, zero_point=-128, name="probabilities")
    b.op("SOFTMAX", [logits], [probs], beta=1.0)
    b.output(probs)
    return b.tflite()


if __name__ == "__main__":
    out = Path(__file__).resolve().parent / "tiny_cnn_int8.tflite"
    out.write_bytes(build())
    print(f"wrote {out} ({out.stat().st_size} bytes)")
