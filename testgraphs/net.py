"""The converter-like int8 network builder every test graph family uses."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph

Quant = tuple[float, int]
SAME, VALID = 0, 1
RELU_ACT = 1
_SPREAD = 73.0  # std of uniform int8 weights: keeps activation spreads level through a conv


class _Net:
    """A GraphBuilder that tracks shapes and invents converter-like weights and quantization."""

    def __init__(self, seed: int, name: str) -> None:
        self.b = GraphBuilder(name)
        self.rng = np.random.default_rng(seed)

    def shape(self, t: int) -> tuple[int, ...]:
        return self.b.tensors[t].shape

    def quant(self, t: int) -> Quant:
        q = self.b.tensors[t].quant
        assert q is not None
        return q.scale, q.zero_point

    def new_quant(self, scale: float, relu: bool = False) -> Quant:
        return float(scale), -128 if relu else int(self.rng.integers(-16, 17))

    def image(self, hw: int, channels: int) -> int:
        return self.b.input((1, hw, hw, channels), "int8", scale=1 / 128, zero_point=0)

    def _act(self, shape: Sequence[int], q: Quant) -> int:
        return self.b.activation(shape, "int8", scale=q[0], zero_point=q[1])

    def conv(
        self,
        x: int,
        out_c: int,
        k: int = 1,
        stride: int = 1,
        *,
        relu: bool = False,
        depthwise: bool = False,
        dilation: int = 1,
        quant: Quant | None = None,
    ) -> int:
        """CONV_2D or DEPTHWISE_CONV_2D (SAME padding); `quant` forces the output params."""
        _, h, w, c = self.shape(x)
        s_in, _ = self.quant(x)
        out_c = c if depthwise else out_c
        fan_in = k * k * (1 if depthwise else c)
        w_scales = self.rng.uniform(0.005, 0.015, out_c)
        w_shape = (1, k, k, out_c) if depthwise else (out_c, k, k, c)
        weights = self.rng.integers(-127, 128, w_shape, dtype=np.int8)
        wt = self.b.const(weights, scale=w_scales, zero_point=0, axis=3 if depthwise else 0)
        bias = self.rng.integers(-2000, 2001, out_c, dtype=np.int32)
        bt = self.b.const(bias, scale=s_in * w_scales)
        spread = s_in * float(w_scales.mean()) * _SPREAD * math.sqrt(fan_in)
        q = quant or self.new_quant(spread * (0.5 if relu else 1.0), relu)
        y = self._act((1, -(-h // stride), -(-w // stride), out_c), q)
        opts = {
            "padding": SAME,
            "stride_h": stride,
            "stride_w": stride,
            "dilation_h_factor": dilation,
            "dilation_w_factor": dilation,
            "fused_activation_function": RELU_ACT if relu else 0,
        }
        if depthwise:
            opts["depth_multiplier"] = 1
        self.b.op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, wt, bt], [y], **opts)
        return y

    def sep_conv(
        self,
        x: int,
        out_c: int,
        k: int = 3,
        stride: int = 1,
        *,
        dilation: int = 1,
        relu: bool = False,
    ) -> int:
        """Depthwise k x k (stride, dilation) then pointwise 1x1 (optionally fused ReLU)."""
        d = self.conv(x, 0, k, stride, depthwise=True, dilation=dilation)
        return self.conv(d, out_c, 1, relu=relu)

    def relu(self, x: int) -> int:
        s, _ = self.quant(x)
        y = self._act(self.shape(x), self.new_quant(s * 0.5, relu=True))
        self.b.op("RELU", [x], [y])
        return y

    def add(self, a: int, b: int, quant: Quant | None = None) -> int:
        q = quant or self.new_quant(math.hypot(self.quant(a)[0], self.quant(b)[0]))
        y = self._act(self.shape(a), q)
        self.b.op("ADD", [a, b], [y], fused_activation_function=0)
        return y

    def add_all(self, xs: Sequence[int]) -> int:
        """Sum of `xs` as a chain of ADDs (`xs[0]` itself if it is alone)."""
        total = xs[0]
        for x in xs[1:]:
            total = self.add(total, x)
        return total

    def concat(self, xs: Sequence[int]) -> int:
        """Channel concatenation; all inputs must share one quantization (TFLM's int8 rule)."""
        q = self.quant(xs[0])
        assert all(self.quant(x) == q for x in xs), "concatenation inputs need shared params"
        _, h, w, _ = self.shape(xs[0])
        y = self._act((1, h, w, sum(self.shape(x)[3] for x in xs)), q)
        self.b.op("CONCATENATION", list(xs), [y], axis=3, fused_activation_function=0)
        return y

    def pool(self, x: int, kind: str, k: int = 3, stride: int = 1, padding: int = SAME) -> int:
        _, h, w, c = self.shape(x)
        hw = (-(-h // stride), -(-w // stride)) if padding == SAME else (1, 1)
        y = self._act((1, *hw, c), self.quant(x))
        opcode = "MAX_POOL_2D" if kind == "max" else "AVERAGE_POOL_2D"
        self.b.op(
            opcode,
            [x],
            [y],
            padding=padding,
            stride_h=stride,
            stride_w=stride,
            filter_height=k if padding == SAME else h,
            filter_width=k if padding == SAME else w,
            fused_activation_function=0,
        )
        return y

    def upsample(self, x: int) -> int:
        _, h, w, c = self.shape(x)
        size = self.b.const(np.array([2 * h, 2 * w], np.int32))
        y = self._act((1, 2 * h, 2 * w, c), self.quant(x))
        self.b.op("RESIZE_NEAREST_NEIGHBOR", [x, size], [y], align_corners=False)
        return y

    def classifier(self, x: int, classes: int) -> int:
        """Global average pool, RESHAPE to (1, C), FULLY_CONNECTED."""
        pooled = self.pool(x, "avg", padding=VALID)
        c = self.shape(x)[3]
        flat = self._act((1, c), self.quant(pooled))
        self.b.op("RESHAPE", [pooled, self.b.const(np.array([1, c], np.int32))], [flat])
        s_in = self.quant(flat)[0]
        w_scale = 0.01
        wt = self.b.const(self.rng.integers(-127, 128, (classes, c), dtype=np.int8), scale=w_scale)
        bt = self.b.const(
            self.rng.integers(-500, 501, classes, dtype=np.int32), scale=s_in * w_scale
        )
        y = self._act((1, classes), self.new_quant(s_in * w_scale * _SPREAD * math.sqrt(c)))
        self.b.op("FULLY_CONNECTED", [flat, wt, bt], [y], fused_activation_function=0)
        return y

    def finish(self, *outputs: int) -> Graph:
        self.b.output(*outputs)
        return self.b.graph()
