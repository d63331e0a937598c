"""Chains of int8 layers built one over the last one's output, for the twin tests of the kernel
rungs (qemu/test_*_twin.py)."""

from __future__ import annotations

import numpy as np

from mcugen.model.builder import GraphBuilder
from support.convs import window_out_hw
from support.op_models import SAME, window_options


class Chain:
    """A model built layer by layer over `x`, the last layer's output (shape `hwc`): weights,
    biases and output zero points drawn from one seeded generator, every output at `out_scale`."""

    def __init__(
        self, hwc: tuple[int, int, int], seed: int, zero_point: int, out_scale: float = 0.1
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.b = GraphBuilder()
        self.hwc = hwc
        self.out_scale = out_scale
        self.x = self.b.input((1, *hwc), "int8", scale=0.05, zero_point=zero_point)

    def _output(self, hw: tuple[int, int], c: int) -> int:
        self.hwc = (*hw, c)
        zp = int(self.rng.integers(-20, 20))
        return self.b.activation((1, *hw, c), "int8", scale=self.out_scale, zero_point=zp)

    def _window(
        self,
        opcode: str,
        weights: tuple[int, int, int, int],
        axis: int,
        stride: tuple[int, int],
        padding: int,
        dil: int,
        act: int,
        source: int | None,
        max_scale: float,
        **options: int,
    ) -> int:
        out_c = weights[axis]
        scales = self.rng.uniform(0.002, max_scale, out_c)
        filt = self.rng.integers(-127, 128, weights, dtype=np.int8)
        w = self.b.const(filt, scale=scales, axis=axis)
        bias = self.rng.integers(-3000, 3000, out_c, dtype=np.int32)
        b = self.b.const(bias, scale=0.05 * scales)
        hw = window_out_hw(self.hwc, weights[1:3], stride, (dil, dil), padding)
        y = self._output(hw, out_c)
        options = window_options(padding, stride, (dil, dil), act, **options)
        self.b.op(opcode, [self.x if source is None else source, w, b], [y], **options)
        self.x = y
        return y

    def depthwise(
        self,
        kernel: tuple[int, int],
        stride: tuple[int, int] = (1, 1),
        padding: int = SAME,
        dil: int = 1,
        act: int = 0,
        mult: int = 1,
    ) -> int:
        """A depthwise layer over `x`, `mult` outputs an input channel."""
        weights = (1, *kernel, self.hwc[2] * mult)
        options = {"depth_multiplier": mult}
        return self._window(
            "DEPTHWISE_CONV_2D", weights, 3, stride, padding, dil, act, None, 0.02, **options
        )

    def conv(
        self,
        out_c: int,
        kernel: tuple[int, int] = (1, 1),
        stride: tuple[int, int] = (1, 1),
        padding: int = SAME,
        dil: int = 1,
        act: int = 0,
        source: int | None = None,
    ) -> int:
        """A convolution over `x` (or `source`, of `x`'s shape) into `out_c` channels."""
        weights = (out_c, *kernel, self.hwc[2])
        return self._window("CONV_2D", weights, 0, stride, padding, dil, act, source, 0.01)

    def add(self, other: int | None = None) -> int:
        """x + x, or x + `other` (which then stays alive until here)."""
        y = self._output(self.hwc[:2], self.hwc[2])
        self.b.op("ADD", [self.x, self.x if other is None else other], [y])
        self.x = y
        return y

    def dense(self, units: int) -> bytes:
        """`x` flattened into a fully connected layer of `units`, the model's output."""
        depth = int(np.prod(self.hwc))
        quant = self.b.graph().tensors[self.x].quant
        assert quant is not None
        flat = self.b.activation((1, depth), "int8", scale=0.1, zero_point=quant.zero_point)
        shape = self.b.const(np.array([1, depth], dtype=np.int32))
        self.b.op("RESHAPE", [self.x, shape], [flat])
        w = self.b.const(self.rng.integers(-127, 128, (units, depth), dtype=np.int8), scale=0.004)
        self.x = self.b.activation((1, units), "int8", scale=0.3, zero_point=2)
        self.b.op("FULLY_CONNECTED", [flat, w, -1], [self.x])
        return self.tflite()

    def tflite(self) -> bytes:
        self.b.output(self.x)
        return self.b.tflite()
