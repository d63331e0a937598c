"""Convolution models shared by the kernel tests, and the optimised variants' check against
the reference kernels and TFLM."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mcugen.codegen import quant
from mcugen.codegen.lower import _variants
from mcugen.link.host_run import random_inputs
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from support.op_models import NONE, SAME, VALID, window_options
from support.paths import FULL_SWEEP
from support.tflm import compare_with_tflm, mcugen_outputs

# --- Shared by the kernel tests: convolution models and the optimised variants' check ----------


def window_out_hw(
    in_hwc: tuple[int, int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    padding: int,
) -> tuple[int, int]:
    """Output height and width of a convolution window (TFLite's SAME and VALID)."""
    dims = []
    for i in range(2):
        eff = (kernel[i] - 1) * dilation[i] + 1
        size = in_hwc[i] if padding == SAME else in_hwc[i] - eff + 1
        dims.append((size + stride[i] - 1) // stride[i])
    return dims[0], dims[1]


def pool_window(
    in_shape: Sequence[int], filt: Sequence[int], stride: Sequence[int], padding: int, act: int
) -> tuple[list[int], dict[str, int]]:
    """A 2-D pooling's output height and width (TFLite's SAME or VALID) and its options."""
    out_hw = [quant.out_size(padding, in_shape[1 + i], filt[i], stride[i]) for i in range(2)]
    options = {
        "padding": padding,
        "stride_h": stride[0],
        "stride_w": stride[1],
        "filter_height": filt[0],
        "filter_width": filt[1],
        "fused_activation_function": act,
    }
    return out_hw, options


@dataclass(frozen=True)
class Window:
    """The window CONV_2D and DEPTHWISE_CONV_2D share: geometry, activation, batch, weights."""

    in_hwc: tuple[int, int, int] = (9, 11, 3)
    kernel: tuple[int, int] = (3, 3)
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: int = SAME
    act: int = NONE
    batch: int = 1
    per_channel: bool = True

    def out_hw(self) -> tuple[int, int]:
        return window_out_hw(self.in_hwc, self.kernel, self.stride, self.dilation, self.padding)

    def window_options(self, **extra: int) -> dict[str, int]:
        """The operator's options, `extra` before the activation (the order the bytes keep)."""
        return window_options(self.padding, self.stride, self.dilation, self.act, **extra)


@dataclass(frozen=True)
class Conv(Window):
    out_c: int = 5
    groups: int = 1
    bias: bool = True
    out_scale: float = 0.16
    weight_max: int = 127  # weights drawn from [-weight_max, weight_max]

    def options(self) -> dict[str, int]:
        return self.window_options()

    def filter_shape(self) -> tuple[int, int, int, int]:
        return (self.out_c, *self.kernel, self.in_hwc[2] // self.groups)


def conv_int8(c: Conv, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((c.batch, *c.in_hwc), "int8", scale=0.04, zero_point=-9)
    w_scales = rng.uniform(0.002, 0.02, c.out_c) if c.per_channel else 0.011
    weights = rng.integers(-c.weight_max, c.weight_max + 1, c.filter_shape(), dtype=np.int8)
    w = b.const(weights, scale=w_scales, zero_point=0, axis=0)
    inputs = [x, w]
    if c.bias:
        bias_scale = 0.04 * np.atleast_1d(w_scales)
        inputs.append(b.const(rng.integers(-3000, 3000, c.out_c, dtype=np.int32), scale=bias_scale))
    else:
        inputs.append(-1)
    y = b.activation((c.batch, *c.out_hw(), c.out_c), "int8", scale=c.out_scale, zero_point=3)
    b.op("CONV_2D", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


Pair = tuple[int, int]


@st.composite
def windows(
    draw: st.DrawFn, kernels: Sequence[Pair], strides: Sequence[Pair], dilations: Sequence[Pair]
) -> tuple[Pair, Pair, Pair, int, Pair]:
    """A random window: (kernel, stride, dilation, padding, the dilated kernel's extent)."""
    kernel = draw(st.sampled_from(kernels))
    stride = draw(st.sampled_from(strides))
    dilation = draw(st.sampled_from(dilations))
    padding = draw(st.sampled_from([SAME, VALID]))
    reach = ((kernel[0] - 1) * dilation[0] + 1, (kernel[1] - 1) * dilation[1] + 1)
    return kernel, stride, dilation, padding, reach


@st.composite
def window_convs(
    draw: st.DrawFn,
    kernels: Sequence[tuple[int, int]],
    strides: Sequence[tuple[int, int]],
    dilations: Sequence[tuple[int, int]],
    grow: int,
    in_channels: st.SearchStrategy[int],
    out_channels: int,
    out_scales: Sequence[float] = (0.16,),
) -> Conv:
    """Random int8 convolutions for the general variant's tests: images up to `grow` past the
    dilated filter, 1x1 filters strided (1x1 stride 1 is conv_2d_1x1_s8's)."""
    kernel, stride, dilation, padding, eff = draw(windows(kernels, strides, dilations))
    if kernel == (1, 1) and stride == (1, 1):
        stride = (2, 2)
    h = draw(st.integers(1 if padding == SAME else eff[0], eff[0] + grow))
    w = draw(st.integers(1 if padding == SAME else eff[1], eff[1] + grow))
    return Conv(
        in_hwc=(h, w, draw(in_channels)),
        out_c=draw(st.integers(1, out_channels)),
        kernel=kernel,
        stride=stride,
        dilation=dilation,
        padding=padding,
        act=draw(st.sampled_from([0, 1, 3])),
        batch=draw(st.integers(1, 2)),
        bias=draw(st.booleans()),
        per_channel=draw(st.booleans()),
        out_scale=draw(st.sampled_from(out_scales)),
    )


@dataclass(frozen=True)
class Dw(Window):
    in_hwc: tuple[int, int, int] = (9, 11, 6)
    mult: int = 1
    bias: str = "const"  # "const"; "absent": two inputs; "omitted": third input -1
    option_mult: int | None = None  # the depth_multiplier written in the options, if not `mult`

    @property
    def out_c(self) -> int:
        return self.in_hwc[2] * self.mult

    def options(self) -> dict[str, int]:
        mult = self.mult if self.option_mult is None else self.option_mult
        return self.window_options(depth_multiplier=mult)


def dw_int8(c: Dw, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((c.batch, *c.in_hwc), "int8", scale=0.05, zero_point=11)
    w_scales = rng.uniform(0.003, 0.03, c.out_c) if c.per_channel else 0.013
    filt = rng.integers(-127, 128, (1, *c.kernel, c.out_c), dtype=np.int8)
    inputs = [x, b.const(filt, scale=w_scales, zero_point=0, axis=3)]
    if c.bias == "const":
        bias_scale = 0.05 * np.atleast_1d(w_scales)
        inputs.append(b.const(rng.integers(-2000, 2000, c.out_c, dtype=np.int32), scale=bias_scale))
    elif c.bias == "omitted":
        inputs.append(-1)
    y = b.activation((c.batch, *c.out_hw(), c.out_c), "int8", scale=0.2, zero_point=-4)
    b.op("DEPTHWISE_CONV_2D", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


@st.composite
def window_depthwise(
    draw: st.DrawFn,
    kernels: Sequence[tuple[int, int]],
    strides: Sequence[tuple[int, int]],
    dilations: Sequence[tuple[int, int]] = ((1, 1),),
    hw: tuple[int, int] = (9, 9),
    channels: tuple[int, int] = (1, 13),
    mult: tuple[int, int] = (1, 1),
    batch: tuple[int, int] = (1, 2),
    acts: Sequence[int] = (0, 1, 3),
    biases: Sequence[str] = ("const", "absent"),
) -> Dw:
    """Random int8 depthwise layers for the variants' tests: images of 1 to `hw`, grown under
    VALID padding to hold one dilated window; `channels`, `mult` and `batch` are ranges."""
    kernel, stride, dilation, padding, reach = draw(windows(kernels, strides, dilations))
    size = draw(st.tuples(st.integers(1, hw[0]), st.integers(1, hw[1])))
    if padding == VALID:
        size = (max(size[0], reach[0]), max(size[1], reach[1]))
    return Dw(
        in_hwc=(*size, draw(st.integers(*channels))),
        mult=draw(st.integers(*mult)),
        kernel=kernel,
        stride=stride,
        dilation=dilation,
        padding=padding,
        act=draw(st.sampled_from(acts)),
        batch=draw(st.integers(*batch)),
        bias=draw(st.sampled_from(biases)),
        per_channel=draw(st.booleans()),
    )


SLOW = settings(
    max_examples=12 if FULL_SWEEP else 6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def reference_kernels(graph: Graph) -> Generated:
    return generate(graph, options=PlanOptions(kernels="reference"))


def fastest_kernels(graph: Graph) -> Generated:
    """Every layer its fastest kernel (`--kernels opt`): what a test of one variant forces, since
    the default may give a layer at the peak a rung with less scratch."""
    return generate(graph, options=PlanOptions(kernels="opt"))


def assert_variant_exact(model: bytes, variant: str, samples: int = 2) -> Generated:
    """`variant` runs some operator of `model`, and opt == reference == TFLM on seeded inputs."""
    gen = fastest_kernels(import_model(model, source="test model"))
    chosen = {low.variant for low in gen.lowered.values()}
    assert variant in chosen, chosen
    inputs = [random_inputs(gen.graph, seed) for seed in range(samples)]
    ours = mcugen_outputs(model, inputs, fastest_kernels)
    theirs = mcugen_outputs(model, inputs, reference_kernels)
    for a, b in zip(ours, theirs, strict=True):
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y), "opt and reference kernels differ"
    result = compare_with_tflm(model, inputs=inputs)
    assert not result.mismatches, result.mismatches[:3]
    return gen


def conv_variant(conv: Conv) -> str:
    """The optimised variant that takes `conv`: the stem kernel's shapes, else the general one."""
    from mcugen.codegen.lower._conv_stem import applies

    stem = conv.groups == 1 and applies(conv.in_hwc[2], conv.kernel[0], conv.dilation)
    return "conv_2d_stem_s8" if stem else "conv_2d_s8"


#: The fast variants the lean ones (codegen/lower/opt_lean.py) follow in a layer's ladder.
FAST_VARIANTS = frozenset({"depthwise_conv_2d_s8", "depthwise_conv_2d_s8_layer", "conv_2d_1x1_s8"})


@contextmanager
def without_variants(names: Collection[str]) -> Iterator[None]:
    """The variant registry without the variants `names` (a rung below them on a ladder then
    takes their layers)."""
    saved = list(_variants.VARIANTS)
    _variants.VARIANTS[:] = [v for v in saved if v.name not in names]
    try:
        yield
    finally:
        _variants.VARIANTS[:] = saved


RING = "depthwise_conv_2d_s8_ring"
#: The fast depthwise variants the ring one (codegen/lower/opt_depthwise_ring.py) follows.
FAST_DEPTHWISE = frozenset({"depthwise_conv_2d_s8", "depthwise_conv_2d_s8_layer"})
#: opt_direct.py's rungs, which take the 1x1 layers of the short requantisation before the lean
#: variant.
DIRECT_RUNGS = frozenset({"conv_2d_1x1_s8_direct", "conv_2d_1x1_s8_staged"})


def lean_only(direct: bool = False) -> AbstractContextManager[None]:
    """The variant registry without the fast variants the lean ones follow and the ring variant
    registered between them (and, if `direct`, without opt_direct.py's rungs, which take 1x1
    layers before the lean variant)."""
    return without_variants(FAST_VARIANTS | {RING} | (DIRECT_RUNGS if direct else set()))


def ring_only() -> AbstractContextManager[None]:
    """The variant registry without the fast depthwise variants the ring one follows."""
    return without_variants(FAST_DEPTHWISE)


def runs_in_place(gen: Generated, op: int) -> bool:
    """Whether operator `op`'s output was planned over its input 0."""
    offsets = gen.plan.tensor_offsets()
    o = gen.graph.operators[op]
    return offsets.get(o.inputs[0]) == offsets.get(o.outputs[0]) is not None


def pointwise(
    hw: tuple[int, int],
    in_c: int,
    out_c: int,
    seed: int,
    *,
    pruned: int = 0,
    act: int = 0,
    per_channel: bool = True,
    chain: bool = False,
    pruned_bias: tuple[int, ...] = (-(2**30), 2**30 - 64, -(2**30) + 128),
) -> bytes:
    """x -> 1x1 conv (in_c -> out_c) [-> 1x1 conv back to in_c, in place over the first's
    output]; the first `pruned` output channels have zero weights and biases from
    `pruned_bias` (near +-2^30)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, *hw, in_c), "int8", scale=0.05, zero_point=int(rng.integers(-128, 128)))
    prev, prev_c = x, in_c
    for c in (out_c, in_c) if chain else (out_c,):
        scales = rng.uniform(0.002, 0.02, c) if per_channel else 0.01
        weights = rng.integers(-127, 128, (c, 1, 1, prev_c), dtype=np.int8)
        bias = rng.integers(-3000, 3000, c).astype(np.int64)
        weights[:pruned] = 0
        bias[:pruned] = rng.choice(pruned_bias, pruned)
        w = b.const(weights, scale=scales, zero_point=0, axis=0)
        bias_q = b.const(bias.astype(np.int32), scale=0.05 * np.atleast_1d(scales) * np.ones(c))
        y = b.activation((1, *hw, c), "int8", scale=0.3, zero_point=int(rng.integers(-128, 100)))
        b.op("CONV_2D", [prev, w, bias_q], [y], **window_options(SAME, (1, 1), (1, 1), act))
        prev, prev_c, pruned = y, c, 0
    b.output(prev)
    return b.tflite()


def in_place_variants(gen: Generated) -> list[str]:
    """The variants of the operators whose output was planned over their input 0."""
    return [low.variant for op, low in gen.lowered.items() if runs_in_place(gen, op)]


def dw_after_add(hw: tuple[int, int], channels: int, stride: int, zp: int) -> bytes:
    """x -> ADD(x, x) -> 3x3 depthwise: the depthwise may run in place over the sum, which dies
    there (the model input itself is never overwritten)."""
    rng = np.random.default_rng(channels * 10 + stride)
    b = GraphBuilder()
    x = b.input((1, *hw, channels), "int8", scale=0.05, zero_point=zp)
    h = b.activation((1, *hw, channels), "int8", scale=0.1, zero_point=zp)
    b.op("ADD", [x, x], [h])
    w_scales = rng.uniform(0.003, 0.03, channels)
    w = b.const(rng.integers(-127, 128, (1, 3, 3, channels), dtype=np.int8), scale=w_scales, axis=3)
    bias = b.const(rng.integers(-2000, 2000, channels, dtype=np.int32), scale=0.1 * w_scales)
    out_hw = tuple((n + stride - 1) // stride for n in hw)
    y = b.activation((1, *out_hw, channels), "int8", scale=0.2, zero_point=-4)
    options = window_options(SAME, (stride, stride), (1, 1), NONE, depth_multiplier=1)
    b.op("DEPTHWISE_CONV_2D", [h, w, bias], [y], **options)
    b.output(y)
    return b.tflite()
