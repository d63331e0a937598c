"""Output before its input (plan/aliasing.py step 7, mcugen/model/overlap.py): windowed operators
whose kernels run output pixels in row-major order write their output from `input_after` bytes
before their dying input, bit-exact with TFLM; the plan check refuses a closer input; kernels
that do not run pixels in order never get it; the shared models' arenas drop."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcugen.plan.aliasing as aliasing
from mcugen.codegen.lower import op_traits
from mcugen.model.tflite_import import import_model, load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan.buffers import align_up
from mcugen.plan.sharing_check import PlanInvalid, check_sharing
from support import SAME, SHARED_MODELS, VALID, Net, assert_matches_tflm, generate_optimized

KINDS = ("conv", "dw", "max", "avg")


def window_model(kind: str, hw: int, c: int, k: int, s: int, pad: int, out_c: int) -> bytes:
    """input -> 1x1 conv -> the windowed operator -> 1x1 conv (the operator's input dies at
    it; with SAME the window may be larger than the padding it gets)."""
    n = Net("int8", seed=hw * 7 + c)
    x = n.conv(n.input((1, hw, hw, c)), c, q=(0.09, 3))
    o = (hw + s - 1) // s if pad == SAME else (hw - k) // s + 1
    if kind == "conv":
        y = n.conv(x, out_c, kernel=k, stride=s, padding=pad)
    elif kind == "dw":
        y = n.dwconv(x, kernel=k, stride=s, padding=pad)
    else:
        opcode = "MAX_POOL_2D" if kind == "max" else "AVERAGE_POOL_2D"
        options = {"padding": pad, "stride_h": s, "stride_w": s, "filter_height": k}
        options["fused_activation_function"] = 0
        y = n.op(opcode, [x], (1, o, o, c), q=(0.09, 3), filter_width=k, **options)
    return n.model(n.conv(y, 3))


@pytest.fixture
def always_shared() -> Iterator[None]:
    """Every sharing the traits allow is taken, whatever it does to the peak."""
    saved = aliasing.no_worse
    aliasing.no_worse = lambda *args, **kwargs: True
    try:
        yield
    finally:
        aliasing.no_worse = saved


def overlapped(gen: Any, op: int) -> bool:
    """Operator `op`'s input lies after its output's start, inside it."""
    o = gen.graph.operators[op]
    offsets = gen.plan.tensor_offsets()
    x, y = offsets.get(o.inputs[0], -1), offsets.get(o.outputs[0], -1)
    return 0 <= y < x < y + gen.graph.tensors[o.outputs[0]].nbytes


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(KINDS),
    hw=st.integers(5, 11),
    c=st.integers(1, 9),
    k=st.integers(1, 4),
    s=st.integers(1, 3),
    pad=st.sampled_from([SAME, VALID]),
    out_c=st.integers(1, 12),
    kernels=st.sampled_from(["reference", "opt"]),
)
def test_windowed_operators_run_over_their_input_bit_exact(
    always_shared: None,
    kind: str,
    hw: int,
    c: int,
    k: int,
    s: int,
    pad: int,
    out_c: int,
    kernels: str,
) -> None:
    model = window_model(kind, hw, c, k, s, pad, out_c)
    generate_fn = functools.partial(generate_optimized, kernels=kernels)
    gen = generate_fn(import_model(model, source="window"))
    op = 1  # the windowed operator (the stored order; no rewrite moves it in these models)
    o, low = gen.graph.operators[op], gen.lowered[op]
    traits = op_traits(gen.graph, gen.lowered).get(op)
    if overlapped(gen, op):
        assert low.pixels_in_order, f"{low.variant} does not run pixels in order"
    elif low.pixels_in_order and traits is not None and traits.input_after is not None:
        offsets = gen.plan.tensor_offsets()
        staged = offsets[o.inputs[0]] == offsets[o.outputs[0]]  # step 5 took it first
        apart = align_up(max(traits.input_after, 1)) >= gen.graph.tensors[o.outputs[0]].nbytes
        assert staged or apart, (low.variant, traits.input_after)
    assert_matches_tflm(model, samples=2, generate_fn=generate_fn)


def test_the_check_refuses_an_input_closer_than_declared() -> None:
    model = window_model("conv", 16, 3, 3, 2, SAME, 8)
    graph = import_model(model, source="stem")
    op = graph.operators[1]
    kind = op_traits(graph)[1]
    assert kind.input_after is not None and kind.input_after > 16
    x, y = op.inputs[0], op.outputs[0]
    gap = align_up(kind.input_after)
    check_sharing(graph, op, kind, {x: 1000 + gap, y: 1000}, {})
    with pytest.raises(PlanInvalid, match="closer than"):
        check_sharing(graph, op, kind, {x: 1000 + gap - 16, y: 1000}, {})


def test_a_kernel_that_runs_channel_bands_never_writes_ahead() -> None:
    """The fast depthwise kernel runs channel groups over all pixels: no `input_after`."""
    model = window_model("dw", 10, 8, 3, 2, SAME, 8)
    g, lowered, _ = prepare(import_model(model, source="dw"), PlanOptions(kernels="opt"))
    assert lowered[1].variant == "depthwise_conv_2d_s8"
    assert op_traits(g, lowered).get(1) is None or op_traits(g, lowered)[1].input_after is None
    assert op_traits(g)[1].input_after is not None  # the reference kernel's would


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models absent")
@pytest.mark.parametrize(
    "name, most",
    [
        ("mlperf_vww_mbv1_int8", 38_896),  # 46,432 before: the stem runs over the image
        ("mlperf_ic_resnet8_int8", 33_888),  # 49,152 (TFLM's head); auto keeps the fastest kernels
        ("tflm_micro_speech_int8", 4_576),  # 6,368; TFLM's head 5,968
    ],
)
def test_shared_models_plan_smaller(name: str, most: int) -> None:
    _, _, plan = prepare(load_model(SHARED_MODELS / f"{name}.tflite"), PlanOptions())
    assert plan.arena_bytes <= most
