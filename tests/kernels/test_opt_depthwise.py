"""The optimised int8 DEPTHWISE_CONV_2D (runtime_c/kernels/opt/depthwise_conv_2d_s8.c) against
the reference kernel and TFLM on random shapes: each case checks that the variant was selected,
then that its outputs equal the reference kernel's and TFLM's bit for bit. Strides 1 and 2 (and
mixed), SAME and VALID, 3x3 and other filter sizes, odd widths, channel counts not multiples of
4, batches, activations, per-tensor and per-channel weights, tiny images whose windows all cross
the border, and in place (the planner puts the output over the input, which the kernel's band of
copied rows allows with no scratch beyond its own)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcugen.boards import load_board, resolve_target
from mcugen.codegen.lower import opt_depthwise
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from support import (
    NEEDS_TWIN,
    SAME,
    SLOW,
    VALID,
    Dw,
    assert_variant_exact,
    dw_after_add,
    dw_int8,
    exact_on_twin,
    runs_in_place,
    window_depthwise,
    window_options,
    window_out_hw,
)

VARIANT = "depthwise_conv_2d_s8"


KERNELS = [(3, 3), (3, 3), (1, 3), (5, 5), (2, 4), (1, 1)]
STRIDES = [(1, 1), (2, 2), (1, 2), (2, 1)]


@SLOW
@given(
    case=window_depthwise(KERNELS, STRIDES, biases=("const", "const", "absent")),
    seed=st.integers(0, 1000),
)
def test_depthwise_variant(case: Dw, seed: int) -> None:
    assert_variant_exact(dw_int8(case, seed), VARIANT)


def in_place(gen: Generated) -> bool:
    return runs_in_place(gen, len(gen.graph.operators) - 1)


def test_depthwise_variant_in_place() -> None:
    """Stride 1 and 2, channel counts not multiples of 4, images down to 2x5 (every window
    crosses the border)."""
    for hw, channels, stride in (((7, 6), 10, 1), ((8, 9), 8, 2), ((3, 3), 9, 1), ((2, 5), 5, 2)):
        gen = assert_variant_exact(dw_after_add(hw, channels, stride, zp=7), VARIANT, samples=2)
        assert in_place(gen), (hw, channels, stride)


def test_in_place_only_while_the_band_stays_ahead() -> None:
    """The build's check of the in-place order: an output row may not reach input rows the band
    has not copied while some remain (a filter row below the padding would break it)."""
    from mcugen.codegen.lower.opt_depthwise import in_place_ok

    same = {"stride_h": 1, "pad_h": 1}
    assert in_place_ok(same, (9, 7), 3, (9, 7))
    assert in_place_ok({"stride_h": 2, "pad_h": 0}, (9, 7), 3, (4, 3))
    # one filter row and one row of padding: output row 0 lands on input row 0 before it is read
    assert not in_place_ok({"stride_h": 1, "pad_h": 1}, (9, 7), 1, (9, 7))


def test_depthwise_reference_outside_the_variant() -> None:
    """Depth multiplier 2 keeps the reference kernel; dilation 2, which the variant does not take
    either, gets the lean variant (opt_lean.py)."""
    from mcugen.model.tflite_import import import_model
    from mcugen.pipeline import generate

    for case, chosen in (
        (Dw(in_hwc=(5, 5, 3), mult=2), "reference"),
        (Dw(in_hwc=(7, 7, 4), dilation=(2, 2)), "depthwise_conv_2d_s8_lean"),
    ):
        gen = generate(import_model(dw_int8(case), source="dw"))
        assert {low.variant for low in gen.lowered.values()} == {chosen}


@SLOW
@given(
    case=window_depthwise(
        [(3, 3), (1, 3), (5, 5), (2, 4), (1, 1)],
        STRIDES[:3],
        [(1, 1), (2, 1)],
        channels=(1, 1),
        mult=(2, 9),
        batch=(1, 1),
        biases=("const",),
    ),
    seed=st.integers(0, 1000),
)
def test_one_input_channel_runs_as_a_convolution(case: Dw, seed: int) -> None:
    """Depth multiplier = output depth on one input channel (person_detect's first layer, 8):
    the general convolution's kernel with the filter's columns as its rows."""
    stem = case.kernel[0] == 3 and case.dilation == (1, 1)  # conv_2d_stem_s8's shapes
    assert_variant_exact(dw_int8(case, seed), "conv_2d_stem_s8" if stem else "depthwise_as_conv_s8")


def dw3_layer(
    b: GraphBuilder,
    rng: np.random.Generator,
    h: int,
    hwc: tuple[int, int, int],
    stride: tuple[int, int],
    padding: int,
    act: int = 0,
) -> tuple[int, tuple[int, int, int]]:
    """One 3x3 depthwise layer over `h` (per-channel scales, a random output zero point): its
    output tensor and shape."""
    channels = hwc[2]
    scales = rng.uniform(0.003, 0.03, channels)
    w = b.const(rng.integers(-127, 128, (1, 3, 3, channels), dtype=np.int8), scale=scales, axis=3)
    bias = b.const(rng.integers(-3000, 3000, channels, dtype=np.int32), scale=0.1 * scales)
    out_hw = window_out_hw(hwc, (3, 3), stride, (1, 1), padding)
    zp = int(rng.integers(-9, 9))
    y = b.activation((1, *out_hw, channels), "int8", scale=0.2, zero_point=zp)
    options = window_options(padding, stride, (1, 1), act, depth_multiplier=1)
    b.op("DEPTHWISE_CONV_2D", [h, w, bias], [y], **options)
    return y, (*out_hw, channels)


def planar_chain(hw: tuple[int, int], channels: int, seed: int) -> bytes:
    """ADD, then 3x3 depthwise layers with no activation (the full int8 range, which the 3x3
    path's assembly takes): stride 1 SAME in place over the sum, stride 2 SAME, stride 1 VALID,
    stride 2 VALID; widths that leave 1, 2 and 3 outputs past the last block of four, at even and
    odd columns."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, *hw, channels), "int8", scale=0.05, zero_point=5)
    h = b.activation((1, *hw, channels), "int8", scale=0.1, zero_point=5)
    b.op("ADD", [x, x], [h])
    hwc = (*hw, channels)
    for stride, padding in (((1, 1), SAME), ((2, 2), SAME), ((1, 1), VALID), ((1, 2), VALID)):
        h, hwc = dw3_layer(b, rng, h, hwc, stride, padding)
    b.output(h)
    return b.tflite()


@NEEDS_TWIN
@pytest.mark.parametrize("board", ["nucleo-f767", "mps2-an386", "mps3-an547"])
def test_planar_assembly_on_dsp_twins(board: str, tmp_path: Path) -> None:
    """The 3x3 path's assembly (blocks of four outputs, the last block at an odd column) runs only
    on the DSP twins: widths 13 and 10 (outputs 13, 7, 11, 5 and 10, 5, 8, 4), channels 6 and 8."""
    for hw, channels in (((9, 13), 6), ((12, 10), 8)):
        model = planar_chain(hw, channels, seed=channels)
        gen = assert_exact_on_twin(model, board, tmp_path / f"chain{channels}", host_plan=True)
        assert VARIANT in {low.variant for low in gen.lowered.values()}


def small_chain(hw: tuple[int, int], channels: int, seed: int) -> bytes:
    """ADD, then SAME 3x3 depthwise layers down to lines of one to three outputs (the planar
    path's blocks of two and one), strides 1 and 2 alternating, the clamped range (ReLU6: the C
    rows on DSP cores too) on the third; tall layers run along columns."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, *hw, channels), "int8", scale=0.05, zero_point=-3)
    h = b.activation((1, *hw, channels), "int8", scale=0.1, zero_point=-3)
    b.op("ADD", [x, x], [h])
    hwc = (*hw, channels)
    for stride, act in ((1, 0), (2, 0), (1, 3), (2, 0), (1, 0)):
        h, hwc = dw3_layer(b, rng, h, hwc, (stride, stride), SAME, act)
    b.output(h)
    return b.tflite()


SMALL_SHAPES = (((6, 6), 12), ((7, 5), 6), ((3, 9), 5), ((5, 3), 9), ((2, 2), 7))


def test_small_planar_lines_on_host() -> None:
    """The planar path's short lines (blocks of two and one, lines of one output) in its C rows."""
    for hw, channels in SMALL_SHAPES:
        assert_variant_exact(small_chain(hw, channels, seed=channels), VARIANT, samples=2)


@NEEDS_TWIN
@pytest.mark.parametrize("board", ["nucleo-f767", "mps2-an386", "mps3-an547"])
def test_small_planar_lines_on_dsp_twins(board: str, tmp_path: Path) -> None:
    """The same in the assembly (lines of 6, 3, 2 and 1 outputs at even and odd widths, padding
    at both ends, channel counts that are not multiples of 4, rows and columns as lines)."""
    for hw, channels in SMALL_SHAPES:
        model = small_chain(hw, channels, seed=channels)
        out_dir = tmp_path / f"small{hw[0]}x{hw[1]}"
        gen = assert_exact_on_twin(model, board, out_dir, host_plan=True)
        assert VARIANT in {low.variant for low in gen.lowered.values()}, (hw, channels)


LAYER = "depthwise_conv_2d_s8_layer"
DSP_TWINS = ["nucleo-l4r5zi", "nucleo-f767", "mps3-an547"]


def layer_chain(seed: int) -> bytes:
    """ADD, then four 3x3 depthwise layers of random shapes with the full int8 range (what the
    layer kernels take): widths 1 to 13 (every remainder of a row's blocks of four), channel
    counts 1 to 13, strides 1 and 2 across and along rows, SAME and VALID, per-channel scales."""
    rng = np.random.default_rng(seed)
    hw = (int(rng.integers(3, 14)), int(rng.integers(1, 14)))
    channels = int(rng.integers(1, 14))
    b = GraphBuilder()
    x = b.input((1, *hw, channels), "int8", scale=0.05, zero_point=int(rng.integers(-9, 9)))
    h = b.activation((1, *hw, channels), "int8", scale=0.1, zero_point=int(rng.integers(-9, 9)))
    b.op("ADD", [x, x], [h])
    hwc = (*hw, channels)
    for _ in range(4):
        stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        valid = hwc[0] >= 3 and hwc[1] >= 3 and rng.random() < 0.3
        h, hwc = dw3_layer(b, rng, h, hwc, stride, VALID if valid else SAME)
    b.output(h)
    return b.tflite()


def assert_exact_on_twin(
    model: bytes, board: str, out_dir: Path, *, host_plan: bool = False
) -> Generated:
    """Lowered for the board's core (the host's with `host_plan`), built for its twin: outputs
    equal TFLM's on two inputs."""
    target = resolve_target(load_board(board), emulate=True)
    core = "host" if host_plan else target.port_board.core
    options = PlanOptions(core=core, kernels="opt")
    gen = generate(import_model(model, source="depthwise chain"), options=options)
    exact_on_twin(gen, model, target, out_dir)
    return gen


@pytest.fixture
def both_strides(monkeypatch: pytest.MonkeyPatch) -> None:
    """Layer kernels at strides 1 and 2: by default only stride 1 is specialised (the cost
    model's code side, opt_depthwise.LAYER_STRIDES), but the assembly takes both."""
    monkeypatch.setattr(opt_depthwise, "LAYER_STRIDES", frozenset({1, 2}))


def test_stride_2_layers_keep_the_general_kernel_by_default() -> None:
    gen = generate(import_model(dw_after_add((8, 9), 7, 2, zp=7), source="s2"), options=M4)
    assert gen.lowered[len(gen.graph.operators) - 1].variant == VARIANT
    gen = generate(import_model(dw_after_add((6, 7), 10, 1, zp=7), source="s1"), options=M4)
    assert gen.lowered[len(gen.graph.operators) - 1].variant == LAYER


M4 = PlanOptions(core="cortex-m4", kernels="opt")


@pytest.mark.usefixtures("both_strides")
def test_layer_kernel_chosen_per_layer() -> None:
    """The layer variant only for DSP cores, 3x3 strides 1 and 2 in the full int8 range with a
    small enough whole-image band; the generated C defines one kernel per distinct shape."""
    model = import_model(small_chain((6, 6), 12, seed=12), source="small chain")
    host = generate(model)
    assert LAYER not in {low.variant for low in host.lowered.values()}
    m4 = generate(model, options=PlanOptions(core="cortex-m4", kernels="opt"))
    by_op = {i: low.variant for i, low in m4.lowered.items()}
    # the third depthwise layer clamps (ReLU6): the general variant's C rows
    assert [by_op[i] for i in sorted(by_op)][1:] == [LAYER, LAYER, VARIANT, LAYER, LAYER]
    c = m4.files["model.c"]
    assert c.count("MCU_DW3_LAYER(g_op") == len({low.layer for low in m4.lowered.values()} - {None})
    # 80x80: a whole-image band of 82 x 82 x 8 bytes, above the limit; 20x20 at the end fits
    big = import_model(small_chain((80, 80), 8, seed=1), source="big")
    lowered = generate(big, options=PlanOptions(core="cortex-m4", kernels="opt")).lowered
    assert (lowered[1].variant, lowered[5].variant) == (VARIANT, LAYER)


@NEEDS_TWIN
@pytest.mark.parametrize("board", DSP_TWINS)
@pytest.mark.usefixtures("both_strides")
def test_layer_kernels_on_dsp_twins(board: str, tmp_path: Path) -> None:
    """Random layer chains (three seeds a board) and the in-place chains, rows and columns as
    lines, each with the layer kernels chosen, equal TFLM on the twin."""
    seeds = {"nucleo-l4r5zi": (1, 2, 3), "nucleo-f767": (4, 5, 6), "mps3-an547": (7, 8, 9)}
    for seed in seeds[board]:
        gen = assert_exact_on_twin(layer_chain(seed), board, tmp_path / f"chain{seed}")
        assert LAYER in {low.variant for low in gen.lowered.values()}, seed
    # rows as lines, then columns (a tall stride-1 layer), each in place
    for hw, channels, stride in (((6, 7), 10, 1), ((8, 9), 7, 2), ((9, 5), 6, 1)):
        model = dw_after_add(hw, channels, stride, zp=7)
        gen = assert_exact_on_twin(model, board, tmp_path / "inplace")
        assert gen.lowered[len(gen.graph.operators) - 1].variant == LAYER
        assert in_place(gen), (hw, channels, stride)
