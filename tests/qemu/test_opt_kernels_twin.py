"""The optimised kernels' DSP paths (SMLAD, SXTAB16, SMMULR and the depthwise window's inline
assembly run only on a core with the DSP extension; the host tests run their C fallbacks) on the
Cortex-M7, M4 and M55 twins, against TFLM bit for bit. One chain per model holds every variant
in odd shapes: depthwise 3x3, 5x5 and 2x4 at strides 1 and 2 with SAME and VALID padding (windows
crossing every border, some running in place over a dying input), channel counts that are not
multiples of 4, a 1x1 convolution, a general convolution, an ADD and a fully connected layer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import NEEDS_TWIN, SAME, VALID, run_twin_against_tflm, window_out_hw

pytestmark = NEEDS_TWIN

VARIANTS = {
    "depthwise_conv_2d_s8",
    "conv_2d_1x1_s8",
    "conv_2d_s8",
    "add_s8",
    "fully_connected_s8",
}


class Chain:
    def __init__(self, in_hwc: tuple[int, int, int], seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.b = GraphBuilder()
        self.hwc = in_hwc
        self.x = self.b.input((1, *in_hwc), "int8", scale=0.05, zero_point=9)

    def _next(self, hw: tuple[int, int], c: int, zp: int) -> int:
        self.hwc = (*hw, c)
        return self.b.activation((1, *hw, c), "int8", scale=0.1, zero_point=zp)

    def dw(
        self,
        kernel: tuple[int, int],
        stride: tuple[int, int],
        padding: int,
        act: int,
        mult: int = 1,
    ) -> None:
        c = self.hwc[2] * mult
        scales = self.rng.uniform(0.002, 0.02, c)
        w = self.b.const(
            self.rng.integers(-127, 128, (1, *kernel, c), dtype=np.int8), scale=scales, axis=3
        )
        bias = self.b.const(self.rng.integers(-3000, 3000, c, dtype=np.int32), scale=0.05 * scales)
        hw = window_out_hw(self.hwc, kernel, stride, (1, 1), padding)
        y = self._next(hw, c, int(self.rng.integers(-20, 20)))
        self.b.op(
            "DEPTHWISE_CONV_2D",
            [self.x, w, bias],
            [y],
            padding=padding,
            stride_h=stride[0],
            stride_w=stride[1],
            depth_multiplier=mult,
            fused_activation_function=act,
        )
        self.x = y

    def conv(
        self, out_c: int, kernel: tuple[int, int], stride: tuple[int, int], act: int = 1
    ) -> None:
        c = self.hwc[2]
        scales = self.rng.uniform(0.002, 0.01, out_c)
        w = self.b.const(
            self.rng.integers(-127, 128, (out_c, *kernel, c), dtype=np.int8), scale=scales, axis=0
        )
        bias = self.b.const(
            self.rng.integers(-3000, 3000, out_c, dtype=np.int32), scale=0.05 * scales
        )
        hw = window_out_hw(self.hwc, kernel, stride, (1, 1), SAME)
        y = self._next(hw, out_c, int(self.rng.integers(-20, 20)))
        self.b.op(
            "CONV_2D",
            [self.x, w, bias],
            [y],
            padding=SAME,
            stride_h=stride[0],
            stride_w=stride[1],
            fused_activation_function=act,
        )
        self.x = y

    def spread(self, mult: int, stride: tuple[int, int], act: int) -> None:
        """A 3x3 SAME depthwise layer of one input channel and `mult` outputs."""
        assert self.hwc[2] == 1
        self.dw((3, 3), stride, SAME, act, mult)

    def add(self) -> None:
        y = self._next(self.hwc[:2], self.hwc[2], -3)
        self.b.op("ADD", [self.x, self.x], [y])
        self.x = y

    def dense(self, units: int) -> bytes:
        depth = int(np.prod(self.hwc))
        flat = self.b.activation((1, depth), "int8", scale=0.1, zero_point=self.zp_of(self.x))
        shape = self.b.const(np.array([1, depth], dtype=np.int32))
        self.b.op("RESHAPE", [self.x, shape], [flat])
        w = self.b.const(self.rng.integers(-127, 128, (units, depth), dtype=np.int8), scale=0.004)
        y = self.b.activation((1, units), "int8", scale=0.3, zero_point=2)
        self.b.op("FULLY_CONNECTED", [flat, w, -1], [y])
        self.b.output(y)
        return self.b.tflite()

    def zp_of(self, tensor: int) -> int:
        quant = self.b.graph().tensors[tensor].quant
        assert quant is not None
        return quant.zero_point


def chain_model(channels: int, seed: int) -> bytes:
    m = Chain((11, 9, channels), seed)
    m.dw((3, 3), (1, 1), SAME, 1)
    m.dw((2, 4), (1, 2), SAME, 0)
    m.conv(channels + 3, (1, 1), (1, 1))
    m.dw((3, 3), (2, 2), SAME, 3)
    m.dw((5, 5), (1, 1), SAME, 1)
    m.dw((3, 3), (1, 1), VALID, 0)
    m.conv(6, (3, 3), (1, 1))
    m.add()
    return m.dense(10)


def stem_models() -> dict[str, bytes]:
    """conv_2d_stem_s8's paths: the assembly of three channels (a 3x3 window of 15 words) and of
    one (a depthwise layer of one input channel, 6 words), both at the full int8 range over
    strips of 8 pixels and a short last one; the C path of a clamped activation, 5 output
    channels and a 3x5 filter."""
    three = Chain((15, 21, 3), seed=1)
    three.conv(8, (3, 3), (2, 2), act=0)
    three.conv(6, (3, 3), (1, 1))
    one = Chain((17, 22, 1), seed=2)
    one.spread(8, (2, 2), act=0)
    clamped = Chain((9, 13, 3), seed=3)
    clamped.conv(5, (3, 5), (1, 2), act=3)
    return {"three": three.dense(10), "one": one.dense(10), "clamped": clamped.dense(10)}


@pytest.mark.parametrize("board", ["nucleo-f767", "mps2-an386", "mps3-an547"])
@pytest.mark.parametrize("channels", [8, 10, 5])
def test_opt_kernels_bit_exact_on_dsp_twins(board: str, channels: int, workdir: Path) -> None:
    model = chain_model(channels, seed=channels)
    gen = generate(import_model(model, source=f"chain{channels}"))
    assert VARIANTS <= {low.variant for low in gen.lowered.values()}
    target = resolve_target(load_board(board), emulate=True)
    result = build(gen, target, workdir / f"chain{channels}-{board}")
    run_twin_against_tflm(target, result.executable, model, gen.graph, (0, 1), varied=True)


@pytest.mark.parametrize("board", ["nucleo-f767", "mps2-an386", "mps3-an547"])
def test_stem_kernel_bit_exact_on_dsp_twins(board: str, workdir: Path) -> None:
    target = resolve_target(load_board(board), emulate=True)
    for name, model in stem_models().items():
        gen = generate(import_model(model, source=f"stem-{name}"))
        assert "conv_2d_stem_s8" in {low.variant for low in gen.lowered.values()}, name
        result = build(gen, target, workdir / f"stem-{name}-{board}")
        run_twin_against_tflm(target, result.executable, model, gen.graph, (0, 1), varied=True)
