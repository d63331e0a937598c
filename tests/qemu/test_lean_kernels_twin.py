"""The lean variants (mcugen/codegen/lower/opt_lean.py) on the Cortex-M7 and M4 twins, where
their DSP intrinsics (SXTAB16, SXTB16, SMLABB / SMLATT, the matrix product's single-row assembly)
run as instructions, against TFLM bit for bit. The fast variants they follow are removed from the
registry for the build, so every depthwise and 1x1 layer runs a lean one: depthwise 3x3, 5x5 and
2x4 at strides 1 and 2, SAME and VALID, dilation 2, channel counts not multiples of 4, some in
place over a dying input (their channel-plane path) and some beside an input still alive, and
1x1 convolutions widening and narrowing, in place too (their staged-pixel path)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.codegen.lower import _variants
from mcugen.firmware.compile import build
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from mcugen.reference import tflm_outputs
from support import FAST_VARIANTS, SAME, VALID, window_out_hw
from support import lean_only as without_fast

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (scripts/install.sh)",
)

LEAN = {"depthwise_conv_2d_s8_lean", "conv_2d_1x1_s8_lean"}
RING = "depthwise_conv_2d_s8_ring"


@contextmanager
def lean_only() -> Iterator[None]:
    """The registry without the fast variants and the ring variant registered between them and
    the lean ones (opt_depthwise_ring.py; tests/qemu/test_ring_kernel_twin.py runs that one)."""
    with without_fast():
        saved = list(_variants.VARIANTS)
        _variants.VARIANTS[:] = [v for v in saved if v.name != RING]
        try:
            yield
        finally:
            _variants.VARIANTS[:] = saved


def lean_model(channels: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    hwc = (11, 9, channels)
    x = b.input((1, *hwc), "int8", scale=0.05, zero_point=9)

    def nxt(hw: tuple[int, int], c: int) -> int:
        nonlocal hwc
        hwc = (*hw, c)
        zp = int(rng.integers(-20, 20))
        return b.activation((1, *hw, c), "int8", scale=0.1, zero_point=zp)

    def dw(kernel: tuple[int, int], stride: tuple[int, int], padding: int, dil: int = 1) -> None:
        nonlocal x
        c = hwc[2]
        scales = rng.uniform(0.002, 0.02, c)
        w = b.const(rng.integers(-127, 128, (1, *kernel, c), dtype=np.int8), scale=scales, axis=3)
        bias = b.const(rng.integers(-3000, 3000, c, dtype=np.int32), scale=0.05 * scales)
        y = nxt(window_out_hw(hwc, kernel, stride, (dil, dil), padding), c)
        b.op(
            "DEPTHWISE_CONV_2D",
            [x, w, bias],
            [y],
            padding=padding,
            stride_h=stride[0],
            stride_w=stride[1],
            dilation_h_factor=dil,
            dilation_w_factor=dil,
            depth_multiplier=1,
            fused_activation_function=int(rng.integers(0, 2)),
        )
        x = y

    def pw(out_c: int) -> None:
        nonlocal x
        c = hwc[2]
        scales = rng.uniform(0.002, 0.01, out_c)
        w = b.const(rng.integers(-127, 128, (out_c, 1, 1, c), dtype=np.int8), scale=scales, axis=0)
        bias = b.const(rng.integers(-3000, 3000, out_c, dtype=np.int32), scale=0.05 * scales)
        y = nxt(hwc[:2], out_c)
        b.op("CONV_2D", [x, w, bias], [y], padding=SAME, stride_h=1, stride_w=1)
        x = y

    def add(other: int | None = None) -> None:
        nonlocal x
        y = nxt(hwc[:2], hwc[2])
        b.op("ADD", [x, x if other is None else other], [y])
        x = y

    add()
    kept = x  # alive until the ADD after the depthwise: that one cannot run in place
    dw((3, 3), (1, 1), SAME)
    add(kept)
    dw((2, 4), (1, 2), SAME)
    pw(channels + 3)
    pw(channels)
    kept = x
    dw((5, 5), (1, 1), SAME)
    add(kept)
    dw((3, 3), (2, 2), SAME)
    kept = x
    dw((3, 3), (1, 1), SAME, dil=2)
    add(kept)
    dw((3, 3), (1, 1), VALID)
    add()
    pw(channels + 5)
    b.output(x)
    return b.tflite()


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mcugen-lean-") as tmp:
        yield Path(tmp)


@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi"])
@pytest.mark.parametrize("channels", [8, 10, 5])
def test_lean_kernels_bit_exact_on_dsp_twins(board: str, channels: int, workdir: Path) -> None:
    model = lean_model(channels, seed=channels)
    target = resolve_target(load_board(board), emulate=True)
    with lean_only():  # and without opt_direct.py's rungs, which take the 1x1 layers first
        saved = list(_variants.VARIANTS)
        ahead = {"conv_2d_1x1_s8_direct", "conv_2d_1x1_s8_staged"}
        _variants.VARIANTS[:] = [v for v in saved if v.name not in ahead]
        try:
            gen = generate(import_model(model, source=f"lean{channels}"))
        finally:
            _variants.VARIANTS[:] = saved
    chosen = {low.variant for low in gen.lowered.values()}
    assert LEAN <= chosen and not FAST_VARIANTS & chosen, chosen
    offsets = gen.plan.tensor_offsets()
    shared = [
        low.variant
        for i, low in gen.lowered.items()
        if offsets.get(gen.graph.operators[i].inputs[0])
        == offsets.get(gen.graph.operators[i].outputs[0])
    ]
    depthwise = [low.variant for low in gen.lowered.values()].count("depthwise_conv_2d_s8_lean")
    assert 0 < shared.count("depthwise_conv_2d_s8_lean") < depthwise, "both paths"
    assert "conv_2d_1x1_s8_lean" in shared
    result = build(gen, target, workdir / f"lean{channels}-{board}")
    samples = [random_inputs(gen.graph, s) for s in (0, 1)]
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, samples, emulated=True)
    ref = tflm_outputs(model, gen.graph, samples)
    for k, (ours, theirs) in enumerate(zip(run.outputs, ref, strict=True)):
        for o, r in zip(ours, theirs, strict=True):
            assert np.array_equal(o, r.reshape(o.shape)), f"sample {k} differs"
            assert len(np.unique(o)) > 1, "a constant output would hide a wrong kernel"
