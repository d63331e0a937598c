"""Graph rewrites (PAD fused into convolutions, depthwise split over a concatenation): the C
generated from the rewritten graph is bit-exact with TFLM on the ORIGINAL model, the portable
rewrites still load in TFLM, and on the real models the arena shrinks with rewrites + aliasing."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcugen.link.host_run import random_inputs
from mcugen.model.ir import Graph
from mcugen.model.rewrite import EXPLICIT_PADDING, fuse_pads
from mcugen.model.tflite_import import import_model, load_model
from mcugen.model.tflite_write import write_model
from mcugen.pipeline import rewritten
from support import (
    SAME,
    SHARED_MODELS,
    VALID,
    Net,
    arenas,
    assert_matches_tflm,
    generate_optimized,
    sweep,
    tflm_outputs,
)

RELU6 = 3


def padded_conv(
    dtype: str,
    opcode: str,
    pads: tuple[int, int, int, int],
    *,
    stride: int = 1,
    padding: int = VALID,
    kernel: int = 3,
    pad_op: str = "PAD",
    value: float | None = None,
    dilation: int = 1,
) -> bytes:
    """input -> conv -> PAD(top, bottom, left, right) -> opcode -> output."""
    n = Net(dtype, seed=sum(pads) + stride)
    x = n.conv(n.input((1, 9, 8, 3)), 6, q=(0.07, -128 if dtype == "int8" else 0), act=RELU6)
    top, bottom, left, right = pads
    shape = (1, 9 + top + bottom, 8 + left + right, 6)
    table = n.b.const(np.array([[0, 0], [top, bottom], [left, right], [0, 0]], np.int32))
    inputs = [x, table]
    if pad_op == "PADV2":
        zp = -128 if dtype == "int8" else 0
        raw = np.array([zp if value is None else value], np.int8 if dtype == "int8" else np.float32)
        inputs.append(n.b.const(raw, **n.q(0.07, -128)))
    p = n.op(pad_op, inputs, shape, q=(0.07, -128))
    build = n.conv if opcode == "CONV_2D" else n.dwconv
    if dilation == 1:
        return n.model(build(p, **_conv_args(opcode, kernel, stride, padding)))
    eff = (kernel - 1) * dilation + 1
    out = [(d - eff) // stride + 1 if padding == VALID else -(-d // stride) for d in shape[1:3]]
    w, bias = n.weights((1, kernel, kernel, 6), 3, 0.07)
    y = n.op(
        "DEPTHWISE_CONV_2D",
        [p, w, bias],
        (1, *out, 6),
        padding=padding,
        stride_h=stride,
        stride_w=stride,
        dilation_h_factor=dilation,
        dilation_w_factor=dilation,
        depth_multiplier=1,
        fused_activation_function=0,
    )
    return n.model(y)


def _conv_args(opcode: str, kernel: int, stride: int, padding: int) -> dict[str, Any]:
    args: dict[str, Any] = {"kernel": kernel, "stride": stride, "padding": padding}
    if opcode == "CONV_2D":
        args["out_c"] = 5
    return args


def graph_of(model: bytes) -> Graph:
    return import_model(model, source="test model")


def assert_tflm_runs_both_alike(rewritten: bytes, model: bytes, samples: int) -> None:
    """TFLM gives identical outputs on a rewritten .tflite and on the original."""
    inputs = [random_inputs(graph_of(model), seed) for seed in range(samples)]
    ours, ref = tflm_outputs(rewritten, inputs), tflm_outputs(model, inputs)
    for o_sample, r_sample in zip(ours, ref, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(o_sample, r_sample, strict=True))


def opcodes(graph: Graph) -> list[str]:
    return [op.opcode for op in graph.operators]


FUSIONS = [
    # (pads top/bottom/left/right, stride, conv padding, expressible as SAME/VALID)
    ((1, 1, 1, 1), 1, VALID, True),  # = SAME
    ((1, 1, 1, 1), 2, VALID, False),  # PyTorch style before a stride-2 conv
    ((0, 1, 0, 1), 2, VALID, False),  # TF's SAME on odd 9 x 8 is (1, 1) / (0, 1)
    ((2, 0, 0, 3), 1, VALID, False),
    ((3, 3, 3, 3), 2, VALID, False),  # MCUNet's 7x7 depthwise style
    ((1, 1, 1, 1), 1, SAME, False),  # PAD then SAME: both paddings add up
    ((0, 0, 0, 0), 1, VALID, True),
]


@pytest.mark.parametrize("opcode", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize(("pads", "stride", "padding", "portable"), FUSIONS)
def test_pad_fusion_matches_tflm(
    dtype: str, opcode: str, pads: tuple, stride: int, padding: int, portable: bool
) -> None:
    model = padded_conv(dtype, opcode, pads, stride=stride, padding=padding)
    fused = rewritten(graph_of(model))
    assert opcodes(fused) == ["CONV_2D", opcode]
    assert (EXPLICIT_PADDING not in fused.operators[1].options) == portable
    assert len(rewritten(graph_of(model), portable=True).operators) == (2 if portable else 3)
    assert_matches_tflm(model, samples=2, generate_fn=generate_optimized)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_padv2_and_dilation_fuse(dtype: str) -> None:
    model = padded_conv(dtype, "DEPTHWISE_CONV_2D", (2, 1, 2, 2), pad_op="PADV2", dilation=2)
    assert opcodes(rewritten(graph_of(model))) == ["CONV_2D", "DEPTHWISE_CONV_2D"]
    assert_matches_tflm(model, samples=2, generate_fn=generate_optimized)


def test_pad_fusion_shrinks_the_arena() -> None:
    model = padded_conv("int8", "DEPTHWISE_CONV_2D", (3, 3, 3, 3), stride=2)
    plain, optimized = arenas(model)
    assert optimized.arena_bytes < plain.arena_bytes


def test_portable_pad_fusion_writes_a_model_tflm_runs_identically() -> None:
    model = padded_conv("int8", "DEPTHWISE_CONV_2D", (1, 1, 1, 1))
    graph = graph_of(model)
    portable = write_model(rewritten(graph, portable=True))
    assert opcodes(graph_of(portable)) == ["CONV_2D", "DEPTHWISE_CONV_2D"]
    assert_tflm_runs_both_alike(portable, model, samples=3)


def test_explicit_padding_is_refused_by_the_tflite_writer() -> None:
    model = padded_conv("int8", "CONV_2D", (1, 1, 1, 1), stride=2)
    with pytest.raises(ValueError, match=EXPLICIT_PADDING):
        write_model(rewritten(graph_of(model)))


@pytest.mark.parametrize(
    "case",
    [
        {"pad_op": "PADV2", "value": -5},  # not the zero point: padding is not neutral
        {"opcode": "MAX_POOL_2D"},  # pooling skips taps as -inf, not as the zero point
        {"dtype_value": "float32", "pad_op": "PADV2", "value": 1.5},
    ],
    ids=["int8-value", "max-pool", "float-value"],
)
def test_pad_that_is_not_neutral_stays(case: dict[str, Any]) -> None:
    dtype = case.get("dtype_value", "int8")
    if case.get("opcode") == "MAX_POOL_2D":
        n = Net(dtype)
        x = n.input((1, 6, 6, 2))
        table = n.b.const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
        p = n.op("PAD", [x, table], (1, 8, 8, 2))
        pool = {"filter_height": 3, "filter_width": 3, "stride_h": 1, "stride_w": 1}
        y = n.op("MAX_POOL_2D", [p], (1, 6, 6, 2), padding=VALID, **pool)
        model = n.model(y)
    else:
        model = padded_conv(dtype, "CONV_2D", (1, 1, 1, 1), pad_op="PADV2", value=case["value"])
    graph = graph_of(model)
    assert rewritten(graph) is graph


def test_pad_read_twice_or_on_channels_stays() -> None:
    n = Net("int8")
    x = n.conv(n.input((1, 5, 5, 3)), 4)
    table = n.b.const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
    p = n.op("PAD", [x, table], (1, 7, 7, 4))
    chan = n.b.const(np.array([[0, 0], [0, 0], [0, 0], [0, 2]], np.int32))
    c = n.op("PAD", [x, chan], (1, 5, 5, 6))
    y1, y2 = n.dwconv(p, padding=VALID), n.conv(p, 2, kernel=3, padding=VALID)
    graph = graph_of(n.model(y1, y2, n.conv(c, 2)))
    assert fuse_pads(graph) is graph


# --- depthwise split over a concatenation ------------------------------------------------------


def concat_depthwise(dtype: str, stride: int, per_channel: bool = True) -> bytes:
    """Three convolutions concatenated on channels, then one depthwise convolution."""
    n = Net(dtype, seed=11)
    x = n.input((1, 8, 8, 4))
    parts = [n.conv(x, c, kernel=k) for c, k in ((3, 1), (5, 3), (4, 1))]
    z = n.op("CONCATENATION", parts, (1, 8, 8, 12), axis=3, fused_activation_function=0)
    if per_channel:
        y = n.dwconv(z, stride=stride, act=RELU6)
    else:
        w = n.b.const(n.rng.integers(-127, 128, (1, 3, 3, 12), dtype=np.int8), scale=0.01)
        bias = n.b.const(n.rng.integers(-900, 900, 12, dtype=np.int32), scale=0.001)
        side = -(-8 // stride)
        options = {"stride_h": stride, "stride_w": stride, "depth_multiplier": 1}
        y = n.op("DEPTHWISE_CONV_2D", [z, w, bias], (1, side, side, 12), padding=SAME, **options)
    return n.model(y)


@pytest.mark.parametrize(
    ("dtype", "per_channel"), [("int8", True), ("int8", False), ("float32", True)]
)
def test_depthwise_split_matches_tflm(dtype: str, per_channel: bool) -> None:
    model = concat_depthwise(dtype, stride=2, per_channel=per_channel)
    graph = graph_of(model)
    split = rewritten(graph)
    assert opcodes(split).count("DEPTHWISE_CONV_2D") == 3
    assert opcodes(split)[-1] == "CONCATENATION"
    plain, optimized = arenas(model)
    assert optimized.arena_bytes < plain.arena_bytes
    assert_matches_tflm(model, samples=2, generate_fn=generate_optimized)
    # the split graph is a plain .tflite: TFLM runs it with identical outputs
    assert_tflm_runs_both_alike(write_model(split), model, samples=2)


def test_depthwise_split_only_where_it_lowers_the_peak() -> None:
    graph = graph_of(concat_depthwise("int8", stride=1))
    assert rewritten(graph) is graph


# --- real models -------------------------------------------------------------------------------

#: mobilenet_v2 (20 s) in benchmarks/sweeps.py only: tests/kernels/test_models.py runs it with
#: rewrites and aliasing on in the suite
REAL = sweep(
    ["mcunet_vww_mixed", "st_miniresnetv2_aed_int8", "tflm_mobilenet_v2_int8"],
    lambda name: name != "tflm_mobilenet_v2_int8",
)


def _real(name: str) -> Path:
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return path


@pytest.mark.parametrize("rewrites", [True, False], ids=["rewrites+aliasing", "aliasing"])
@pytest.mark.parametrize("name", REAL)
def test_real_model_bit_exact_with_rewrites_and_aliasing(name: str, rewrites: bool) -> None:
    path = _real(name)
    gen = functools.partial(generate_optimized, rewrites=rewrites)
    result = assert_matches_tflm(path.read_bytes(), samples=2, seed=7, generate_fn=gen)
    assert result.samples == 2


def test_real_model_arenas(capsys: pytest.CaptureFixture[str]) -> None:
    """Arena (stored order, greedy by size) without and with rewrites + aliasing."""
    if not SHARED_MODELS.is_dir():
        pytest.skip("../shared/models not present")
    rows = []
    for name in REAL:
        graph = load_model(_real(name))
        plain = generate_optimized(graph, rewrites=False, aliasing=False).plan
        aliased = generate_optimized(graph, rewrites=False).plan
        both = generate_optimized(graph).plan
        assert both.arena_bytes <= plain.arena_bytes and aliased.arena_bytes <= plain.arena_bytes
        rows.append((name, plain.arena_bytes, aliased.arena_bytes, both.arena_bytes))
    with capsys.disabled():
        print("\nmodel | arena | aliasing | rewrites + aliasing")
        for row in rows:
            print(" | ".join(str(v) for v in row))
    shrunk = {name for name, plain, _, both in rows if both < plain}
    assert shrunk == set(REAL)


#: PADs whose fused padding SAME/VALID can express (the others are PyTorch-style, before stride 2).
PORTABLE_PAD_FUSIONS = {
    "mcunet_vww_mixed": 0,
    "st_miniresnetv2_aed_int8": 2,
    "tflm_mobilenet_v2_int8": 13,
}


@pytest.mark.parametrize("name", REAL)
def test_real_model_portable_rewrite_round_trips_through_tflm(name: str) -> None:
    """The .tflite-expressible rewrites written back out: TFLM's outputs do not change."""
    path = _real(name)
    graph = load_model(path)
    fused_graph = rewritten(graph, portable=True)
    fused = opcodes(graph).count("PAD") - opcodes(fused_graph).count("PAD")
    assert fused == PORTABLE_PAD_FUSIONS[name]
    assert_tflm_runs_both_alike(write_model(fused_graph), path.read_bytes(), samples=2)
