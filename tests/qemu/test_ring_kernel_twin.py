"""The ring depthwise variant (mcugen/codegen/lower/opt_depthwise_ring.py) on the Cortex-M4, M7
and M55 twins, where its band fill and the planar path's lines run as assembly (SADD16, SMLAD,
SMMLAR), against TFLM bit for bit. The fast depthwise variants are removed from the registry for
the build, so every 3x3 depthwise layer runs the ring one: strides 1, 2 and mixed, SAME and
VALID, KWS's 25x5 shape (rows, several output lines a call, the band's last lines moved forward),
a tall image (columns), channel counts not multiples of 4, full-range activations (assembly) and
clamped ones (C), in place over a dying input and beside an input still alive."""

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
from support import SAME, VALID, window_out_hw

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (scripts/install.sh)",
)

RING = "depthwise_conv_2d_s8_ring"
FAST = frozenset({"depthwise_conv_2d_s8", "depthwise_conv_2d_s8_layer"})


@contextmanager
def ring_only() -> Iterator[None]:
    """The variant registry without the fast depthwise variants the ring one follows."""
    saved = list(_variants.VARIANTS)
    _variants.VARIANTS[:] = [v for v in saved if v.name not in FAST]
    try:
        yield
    finally:
        _variants.VARIANTS[:] = saved


def ring_model(hw: tuple[int, int], channels: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    hwc = (*hw, channels)
    x = b.input((1, *hwc), "int8", scale=0.05, zero_point=9)

    def nxt(shape: tuple[int, int], c: int) -> int:
        nonlocal hwc
        hwc = (*shape, c)
        zp = int(rng.integers(-20, 20))
        return b.activation((1, *shape, c), "int8", scale=0.1, zero_point=zp)

    def dw(stride: tuple[int, int], padding: int, act: int = 0) -> None:
        nonlocal x
        c = hwc[2]
        scales = rng.uniform(0.002, 0.02, c)
        w = b.const(rng.integers(-127, 128, (1, 3, 3, c), dtype=np.int8), scale=scales, axis=3)
        bias = b.const(rng.integers(-3000, 3000, c, dtype=np.int32), scale=0.05 * scales)
        y = nxt(window_out_hw(hwc, (3, 3), stride, (1, 1), padding), c)
        b.op(
            "DEPTHWISE_CONV_2D",
            [x, w, bias],
            [y],
            padding=padding,
            stride_h=stride[0],
            stride_w=stride[1],
            depth_multiplier=1,
            fused_activation_function=act,
        )
        x = y

    def add(other: int | None = None) -> None:
        nonlocal x
        y = nxt(hwc[:2], hwc[2])
        b.op("ADD", [x, x if other is None else other], [y])
        x = y

    add()
    dw((1, 1), SAME)  # over the dying sum: in place
    kept = x
    dw((1, 1), SAME, act=1)  # beside `kept`, clamped: the C lines
    add(kept)
    dw((1, 1), SAME)
    dw((2, 1), SAME)
    dw((1, 2), VALID)
    dw((2, 2), SAME)
    b.output(x)
    return b.tflite()


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mcugen-ring-") as tmp:
        yield Path(tmp)


@pytest.mark.parametrize("board", ["nucleo-f767", "nucleo-l4r5zi", "mps3-an547"])
@pytest.mark.parametrize("hw, channels", [((25, 5), 10), ((30, 14), 5)])
def test_ring_kernel_bit_exact_on_dsp_twins(
    board: str, hw: tuple[int, int], channels: int, workdir: Path
) -> None:
    model = ring_model(hw, channels, seed=channels)
    target = resolve_target(load_board(board), emulate=True)
    with ring_only():
        gen = generate(import_model(model, source=f"ring{channels}"))
    variants = [low.variant for low in gen.lowered.values()]
    assert variants.count(RING) == 6 and not FAST & set(variants), variants
    offsets = gen.plan.tensor_offsets()
    shared = [
        low.variant
        for i, low in gen.lowered.items()
        if offsets.get(gen.graph.operators[i].inputs[0])
        == offsets.get(gen.graph.operators[i].outputs[0])
    ]
    assert 0 < shared.count(RING) < 6, "in place and not"
    result = build(gen, target, workdir / f"ring{channels}-{board}")
    samples = [random_inputs(gen.graph, s) for s in (0, 1)]
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, samples, emulated=True)
    ref = tflm_outputs(model, gen.graph, samples)
    for k, (ours, theirs) in enumerate(zip(run.outputs, ref, strict=True)):
        for o, r in zip(ours, theirs, strict=True):
            assert np.array_equal(o, r.reshape(o.shape)), f"sample {k} differs"
            assert len(np.unique(o)) > 1, "a constant output would hide a wrong kernel"
