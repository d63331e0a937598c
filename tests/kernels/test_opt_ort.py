"""The optimised kernels of `--onnx-numerics ort` (mcugen/codegen/lower/ort_opt.py): which layers
get them, and their outputs equal the ort reference kernels' (reference/ort_conv.c) byte for
byte on random shapes of each class: the matrix product's one row and pairs of rows, odd pixel
counts, depths and channel counts off multiples of 4, in place; the general convolution's
windows (strides, dilations, padding, batches, no bias); the first layer's band (three filter
rows over one or three channels); the depthwise band (any filter up to 16
rows, strides, in place). Per-tensor and per-channel scales, ReLU and ReLU6 ranges. The test
networks' agreement with onnxruntime itself is test_onnx_numerics.py's (host) and
tests/qemu/test_onnx_twin.py's (F767 twin), which run these kernels by default."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower._conv_stem import applies
from mcugen.link.host_run import random_inputs
from mcugen.model.ir import Graph
from mcugen.model.numerics import NUMERICS_METADATA
from mcugen.model.tflite_import import import_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from support import SAME, SLOW, VALID, pointwise
from support.convs import (
    Conv,
    Dw,
    conv_int8,
    dw_after_add,
    dw_int8,
    runs_in_place,
    window_convs,
    window_depthwise,
)
from support.op_models import fc_models
from support.tflm import mcugen_outputs


def ort(kernels: str) -> Callable[[Graph], Generated]:
    """generate() with onnxruntime's numerics and `kernels`."""

    def run(graph: Graph) -> Generated:
        graph = replace(graph, metadata={**graph.metadata, NUMERICS_METADATA: b"ort"})
        return generate(graph, options=PlanOptions(kernels=kernels))

    return run


def assert_ort_exact(model: bytes, variant: str, samples: int = 2) -> Generated:
    """`variant` runs some operator of `model` with ort numerics, and its outputs equal the ort
    reference kernels' on seeded inputs."""
    gen = ort("opt")(import_model(model, source="test model"))
    chosen = {low.variant for low in gen.lowered.values()}
    assert variant in chosen, chosen
    inputs = [random_inputs(gen.graph, seed) for seed in range(samples)]
    ours = mcugen_outputs(model, inputs, ort("opt"))
    theirs = mcugen_outputs(model, inputs, ort("reference"))
    for a, b in zip(ours, theirs, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y, "ort opt and ort reference kernels differ")
    return gen


@SLOW
@given(model=fc_models(units=11))
def test_dense(model: bytes) -> None:
    """One row (four channels a pass, then a pair, then one) and pairs of rows."""
    assert_ort_exact(model, "fully_connected_s8_ort")


@SLOW
@given(
    model=st.builds(
        pointwise,
        st.tuples(st.integers(1, 5), st.integers(1, 5)),
        st.integers(1, 21),
        st.integers(1, 13),
        st.integers(0, 1000),
        act=st.sampled_from([0, 1, 3]),
        per_channel=st.booleans(),
        chain=st.booleans(),
    )
)
def test_pointwise(model: bytes) -> None:
    """Odd pixel counts end on one row; chained, the second layer runs in place."""
    assert_ort_exact(model, "conv_2d_1x1_s8_ort")


def test_pointwise_runs_in_place() -> None:
    gen = assert_ort_exact(pointwise((3, 5), 12, 7, 4, chain=True), "conv_2d_1x1_s8_ort")
    assert runs_in_place(gen, 1)
    assert gen.lowered[1].variant == "conv_2d_1x1_s8_ort"


@SLOW
@given(
    conv=window_convs(
        kernels=[(1, 1), (3, 3), (5, 3), (2, 4)],
        strides=[(1, 1), (2, 2), (1, 2)],
        dilations=[(1, 1), (2, 1)],
        grow=4,
        in_channels=st.integers(1, 9),
        out_channels=9,
        out_scales=(0.16, 0.6),
    ),
    seed=st.integers(0, 1000),
)
def test_conv(conv: Conv, seed: int) -> None:
    """Three filter rows over one or three channels are the stem's (`test_stem`)."""
    stem = applies(conv.in_hwc[2], conv.kernel[0], conv.dilation) and conv.groups == 1
    assert_ort_exact(conv_int8(conv, seed), "conv_2d_stem_s8_ort" if stem else "conv_2d_s8_ort")


@st.composite
def stems(draw: st.DrawFn) -> Conv:
    """conv_2d_stem_s8's shapes: three filter rows and 1 to 5 columns over one or three input
    channels, strides 1 to 3, SAME and VALID, several strips and a short last one, output
    channels off multiples of 4, ReLU and ReLU6, batches."""
    k_w = draw(st.integers(1, 5))
    padding = draw(st.sampled_from([SAME, VALID]))
    low = 1 if padding == SAME else 3
    return Conv(
        in_hwc=(
            draw(st.integers(low, 9)),
            draw(st.integers(max(low, k_w if padding == VALID else 1), 27)),
            draw(st.sampled_from([1, 3])),
        ),
        out_c=draw(st.integers(1, 13)),
        kernel=(3, k_w),
        stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        padding=padding,
        act=draw(st.sampled_from([0, 1, 3])),
        batch=draw(st.integers(1, 2)),
        bias=draw(st.booleans()),
        per_channel=draw(st.booleans()),
        out_scale=draw(st.sampled_from([0.16, 0.6])),
    )


@SLOW
@given(conv=stems(), seed=st.integers(0, 1000))
def test_stem(conv: Conv, seed: int) -> None:
    """The host runs the stem's C sums (the assembly's: tests/qemu/test_ort_kernels_twin.py)."""
    assert_ort_exact(conv_int8(conv, seed), "conv_2d_stem_s8_ort")


@SLOW
@given(
    dw=window_depthwise(
        kernels=[(3, 3), (5, 5), (1, 1), (3, 1), (10, 4)],
        strides=[(1, 1), (2, 2), (1, 2)],
        hw=(12, 12),
        biases=("const", "absent", "omitted"),
    ),
    seed=st.integers(0, 1000),
)
def test_depthwise(dw: Dw, seed: int) -> None:
    assert_ort_exact(dw_int8(dw, seed), "depthwise_conv_2d_s8_ort")


@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_runs_in_place(stride: int) -> None:
    gen = assert_ort_exact(dw_after_add((6, 7), 10, stride, 5), "depthwise_conv_2d_s8_ort")
    assert runs_in_place(gen, 1)


def test_what_the_variants_leave_to_the_reference() -> None:
    """A grouped convolution, a depth multiplier of 2, a dilated depthwise layer, and a layer
    whose accumulators times the scale could leave int32 (`scaled_fits`) keep the ort
    reference kernel."""
    for model in (
        conv_int8(Conv(in_hwc=(6, 6, 4), out_c=4, groups=2)),
        conv_int8(Conv(in_hwc=(6, 6, 4), out_c=4, out_scale=1e-7)),
        dw_int8(Dw(in_hwc=(6, 6, 3), mult=2)),
        dw_int8(Dw(in_hwc=(9, 9, 3), dilation=(2, 2))),
    ):
        gen = ort("opt")(import_model(model, source="test model"))
        assert {low.variant for low in gen.lowered.values()} == {"reference"}
        assert all(low.function.endswith("_ort") for low in gen.lowered.values())


def test_every_ort_variant_is_costed() -> None:
    """The kernel choice's instruction estimates and weight staging's read counts know every ort
    variant (a variant they do not know is never swapped on a measured cost, never staged)."""
    from mcugen.codegen.lower._variants import VARIANTS
    from mcugen.codegen.weight_reads import ONCE, PAIRED
    from mcugen.kernel_costs import PER_MAC

    names = {v.name for v in VARIANTS if v.name.endswith("_ort")}
    layers = {
        "conv_2d_stem_s8_ort",
        "fully_connected_s8_ort",
        "conv_2d_1x1_s8_ort",
        "conv_2d_s8_ort",
        "depthwise_conv_2d_s8_ort",
    }
    # ADD and MUL (ort_binary_opt.py) read no weights and are costed per element
    assert names == layers | {"add_s8_ort", "mul_s8_ort"}
    # the stem keeps its weights in its parameters: no filter read through the tensor table
    assert all(n in PER_MAC for n in layers)
    assert all(n in PAIRED or n in ONCE for n in layers - {"conv_2d_stem_s8_ort"})
