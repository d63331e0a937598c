"""The convolutions' rungs for memory on the Cortex-M7 and M4 twins, where their assembly runs,
against TFLM bit for bit: conv_2d_s8_col2 and conv_2d_s8_col (two and one windows of bytes,
runtime_c/kernels/opt/conv_2d_s8_col2.c, conv_2d_s8_col.c), conv_2d_1x1_s8_staged (two pixels
staged as bytes) and conv_2d_1x1_s8_direct (pixels read as they are). The kernels they follow are
removed from the registry for the build, so every convolution runs one of them: KWS's first
layer's 10x4 filter over one channel (depth 40: whole blocks, an odd count), 3x3 and 5x3 filters
over 5 and 3 channels (tails of 1 and 3), strided, dilated, SAME and VALID, groups of four output
channels with 0 to 3 left over; 1x1 layers widening and narrowing, in place (staged pixels) and
beside a live input, with depths multiples of 4 and not, odd and even channel counts."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
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
from support import SAME, VALID, window_out_hw

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (scripts/install.sh)",
)

#: per general rung: the rungs the build runs, and the kernels removed for it
RUNGS = {
    "conv_2d_s8_col2": {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_1x1_s8"},
    "conv_2d_s8_col": {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_1x1_s8", "conv_2d_s8_col2"},
}


def rungs_model(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    hwc = (21, 10, 1)
    x = b.input((1, *hwc), "int8", scale=0.05, zero_point=-7)

    def conv(
        out_c: int,
        kernel: tuple[int, int],
        stride: tuple[int, int] = (1, 1),
        padding: int = SAME,
        dil: int = 1,
        act: int = 0,
        source: int | None = None,
    ) -> int:
        nonlocal x, hwc
        c = hwc[2]
        scales = rng.uniform(0.002, 0.01, out_c)
        shape = (out_c, *kernel, c)
        w = b.const(rng.integers(-127, 128, shape, dtype=np.int8), scale=scales, axis=0)
        bias = b.const(rng.integers(-3000, 3000, out_c, dtype=np.int32), scale=0.05 * scales)
        hw = window_out_hw(hwc, kernel, stride, (dil, dil), padding)
        y = b.activation((1, *hw, out_c), "int8", scale=0.2, zero_point=int(rng.integers(-20, 20)))
        b.op(
            "CONV_2D",
            [x if source is None else source, w, bias],
            [y],
            padding=padding,
            stride_h=stride[0],
            stride_w=stride[1],
            dilation_h_factor=dil,
            dilation_w_factor=dil,
            fused_activation_function=act,
        )
        x, hwc = y, (*hw, out_c)
        return y

    conv(12, (10, 4), (2, 2), act=1)  # KWS's first layer
    conv(16, (1, 1))  # 1x1, depth 12
    conv(13, (1, 1))  # in place, narrowing; 3 groups and 1 left over
    conv(5, (3, 3), dil=2)  # col, depth 117 (a tail of 1), 1 group and 1 left over
    kept = conv(8, (1, 1))  # depth 5: the single-row fallback
    conv(22, (1, 1))  # in place, widening; 2 left over
    conv(3, (5, 3), (2, 1), VALID, act=3)  # col, a pair of channels and one
    del kept
    b.output(x)
    return b.tflite()


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mcugen-rungs-") as tmp:
        yield Path(tmp)


@pytest.mark.parametrize("general", sorted(RUNGS))
@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi"])
def test_conv_rungs_bit_exact_on_dsp_twins(board: str, general: str, workdir: Path) -> None:
    model = rungs_model(seed=3)
    target = resolve_target(load_board(board), emulate=True)
    saved = list(_variants.VARIANTS)
    _variants.VARIANTS[:] = [v for v in saved if v.name not in RUNGS[general]]
    try:
        gen = generate(import_model(model, source="rungs"))
    finally:
        _variants.VARIANTS[:] = saved
    chosen = [low.variant for low in gen.lowered.values()]
    assert set(chosen) == {general, "conv_2d_1x1_s8_staged", "conv_2d_1x1_s8_direct"}, chosen
    offsets = gen.plan.tensor_offsets()
    shared = [
        gen.lowered[o.index].variant
        for o in gen.graph.operators
        if offsets.get(o.inputs[0]) == offsets.get(o.outputs[0])
    ]
    assert {"conv_2d_1x1_s8_direct", "conv_2d_1x1_s8_staged"} <= set(shared), "staged pixels"
    result = build(gen, target, workdir / f"{general}-{board}")
    samples = [random_inputs(gen.graph, s) for s in (0, 1)]
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, samples, emulated=True)
    ref = tflm_outputs(model, gen.graph, samples)
    for k, (ours, theirs) in enumerate(zip(run.outputs, ref, strict=True)):
        for o, r in zip(ours, theirs, strict=True):
            assert np.array_equal(o, r.reshape(o.shape)), f"sample {k} differs"
            assert len(np.unique(o)) > 1, "a constant output would hide a wrong kernel"
