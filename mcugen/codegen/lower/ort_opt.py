"""Optimised variants of onnxruntime's numerics (lower/_ort.py, ort_windows.py): the int8
kernels' sums with onnxruntime's output stage (mcu_ort_requant, float32 scale rounded half to
even) in place of TFLM's requantisation, byte for byte the ort reference kernels' outputs
(reference/ort_conv.c), chosen as any variant is (lower/_variants.py) when the reference
lowering is an ort kernel.

- FULLY_CONNECTED and 1x1 CONV_2D of stride 1 and one group: the int8 matrix product
  (kernels/opt/mat_mult_s8_ort.c running mat_mult_s8.c with an output function), its weights in
  opt_mat_mult's pair layout and the input offset folded into the bias.
- CONV_2D of a first layer (three filter rows over one or three input channels, dilation 1):
  conv_2d_stem_s8.c's band and sums, `mcu_conv_2d_stem_s8_ort`, its weights unshifted.
- CONV_2D of one group, any other filter, stride, dilation and padding: conv_2d_s8.c's
  `mcu_conv_2d_s8_ort`, opt_conv_2d's filter layout, records holding only the folded bias.
- DEPTHWISE_CONV_2D of depth multiplier 1 and dilation 1, at most 16 filter rows:
  depthwise_conv_2d_s8's band path (kernels/opt/depthwise_conv_2d_s8_ort.c).

Folding is exact as in the TFLite variants: the sums are integers whose order does not matter,
the reference lowering checked the full sum fits int32, and a folded bias outside int32 keeps
the reference kernel. Anything these do not take (groups, weights another operator reads, an
input zero point outside int8) runs the ort reference kernel, as `--kernels reference` does."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from mcugen.codegen.lower import Array, Lowered, Params, fields, member
from mcugen.codegen.lower._common import WINDOW_PARAMS
from mcugen.codegen.lower._conv_stem import (
    STRIP,
    applies,
    stem_scratch_bytes,
    stem_weights,
    window_words,
)
from mcugen.codegen.lower._rung import rung
from mcugen.codegen.lower.conv_2d import conv_staging_bytes
from mcugen.codegen.lower.opt_conv_2d import (
    WINDOW,
    is_pointwise_unit,
    laid_out_weights,
    scratch_bytes,
)
from mcugen.codegen.lower.opt_depthwise import MAX_ROWS, band_width, in_place_ok
from mcugen.codegen.lower.opt_mat_mult import (
    HEADER,
    _variant,
    dense_entry,
    filter_rows,
    folded_bias,
    takes_1x1,
    widened_bytes,
)
from mcugen.model.ir import Graph, Operator
from mcugen.model.traits import NO_TRAITS, OpTraits

#: the ort reference functions (ort_windows.py) the variants take over
ORT_FUNCTIONS = {
    "CONV_2D": "mcu_conv_2d_int8_ort",
    "DEPTHWISE_CONV_2D": "mcu_depthwise_conv_2d_int8_ort",
    "FULLY_CONNECTED": "mcu_fully_connected_int8_ort",
}


#: mat_mult_s8_ort.c and the kernels its entries run (conv_2d_1x1_s8.c's stream entry links
#: the pairs' product): all of them, whichever entry a layer calls
PRODUCT_SOURCES = (
    "opt/mat_mult_s8.c",
    "opt/mat_mult_s8_pairs.c",
    "opt/fully_connected_s8.c",
    "opt/conv_2d_1x1_s8.c",
    "opt/mat_mult_s8_ort.c",
)


def is_ort(graph: Graph, op: Operator, reference: Lowered) -> bool:
    """The reference lowering is the ort kernel of `op`, its sums within `scaled_fits`."""
    if reference.function != ORT_FUNCTIONS.get(op.opcode):
        return False
    w = graph.tensors[op.inputs[1]]
    return w.data is not None and w.dtype == "int8" and scaled_fits(graph, op, reference)


#: |accumulator * scale| below this, for every accumulator a layer can produce: the kernels'
#: output stage (mcu/ort_requant.h mcu_ort_out) rounds the product by adding 1.5 * 2^23 where
#: the FPU has no VRINTR (exact below 2^22), converts it to int32 and clamps it there
SCALED_LIMIT = 2.0**21


def scaled_fits(graph: Graph, op: Operator, reference: Lowered) -> bool:
    """Every output channel's largest |accumulator| (|bias| plus the largest |input - zero point|
    times the sum of |weights|) times its scale stays below SCALED_LIMIT (in float64, exact for
    the float32 scales; the float32 products differ by a few units in 2^-24)."""
    rq = dict(ort_fields(reference))
    offset, scales = rq["input_offset"], rq["scales"]
    assert isinstance(offset, int) and isinstance(scales, Array)
    reach = max(127 + offset, 128 - offset) * np.abs(filter_rows(graph, op)).sum(axis=1)
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        bias = graph.tensors[op.inputs[2]].array().astype(np.int64).reshape(-1)
        reach = reach + np.abs(bias)
    scaled = reach.astype(np.float64) * np.asarray(scales.values, np.float64)
    return bool(np.all(scaled < SCALED_LIMIT))


def ort_fields(reference: Lowered) -> Params:
    """The ort reference lowering's mcu_ort_requant_t fields, by their own names."""
    return tuple((n.partition(".")[2], v) for n, v in reference.params if n.startswith("rq."))


def _product_params(graph: Graph, op: Operator, reference: Lowered) -> Params | None:
    """mcu_mat_mult_s8_params_t for onnxruntime's output stage, None when the bias does not
    fold within int32."""
    rq = dict(ort_fields(reference))
    bias = folded_bias(graph, op, int(rq["input_offset"]))  # type: ignore[arg-type]
    if bias is None:
        return None
    keep = ("output_offset", "act_min", "act_max", "num_channels")
    product = (*((k, rq[k]) for k in keep), ("bias", bias))
    return (*member("product", product), ("scales", rq["scales"]))


def _product(
    graph: Graph, op: Operator, reference: Lowered, name: str, function: str, scratch: int
) -> Lowered | None:
    return _variant(
        graph,
        op,
        reference,
        name,
        function,
        scratch,
        params_of=_product_params,
        sources=PRODUCT_SOURCES,
        params_type="mcu_mat_mult_s8_ort_params_t",
        # mat_mult_s8_ort.c declares both operators' entries
        headers=(HEADER, "mcu/kernels/conv_2d.h", "mcu/kernels/fully_connected.h"),
    )


@rung("fully_connected_s8_ort", "FULLY_CONNECTED")
def fully_connected_s8_ort(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """onnxruntime's numerics: int8 input, any shape, |sum x scale| < 2^21 (the int8 matrix
    product)."""
    if not is_ort(graph, op, reference):
        return None
    function, scratch = dense_entry(
        graph, op, "mcu_fully_connected_s8_ort", "mcu_fully_connected_s8_row_ort"
    )
    return _product(graph, op, reference, "fully_connected_s8_ort", function, scratch)


@rung("conv_2d_1x1_s8_ort", "CONV_2D")
def conv_2d_1x1_s8_ort(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """onnxruntime's numerics: int8, 1x1 filter, stride 1, one group, |sum x scale| < 2^21 (the
    int8 matrix product)."""
    if not takes_1x1(graph, op, reference, ORT_FUNCTIONS["CONV_2D"]):
        return None
    if not is_ort(graph, op, reference):
        return None
    x = graph.tensors[op.inputs[0]]
    low = _product(
        graph,
        op,
        reference,
        "conv_2d_1x1_s8_ort",
        "mcu_conv_2d_1x1_s8_ort",
        widened_bytes(x.shape[3]),
    )
    if low is None:
        return None
    # as conv_2d_1x1_s8: the widened pair is the staging for running in place
    in_place = conv_staging_bytes(graph, op) is not None
    traits = OpTraits(staging_bytes=0) if in_place else None
    return replace(low, traits=traits, output_stride=True)


@rung("conv_2d_stem_s8_ort", "CONV_2D")
def conv_2d_stem_s8_ort(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """onnxruntime's numerics: int8 first layers, a filter of three rows over one or three input
    channels, one group, dilation 1, |sum x scale| < 2^21 (conv_2d_stem_s8's band and sums)."""
    if not is_ort(graph, op, reference):
        return None
    ref = fields(reference.params)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    in_c, k_w = x.shape[3], w.shape[2]
    dilation = (ref["dilation_h"], ref["dilation_w"])
    if w.shape[3] != in_c or not applies(in_c, w.shape[1], dilation):  # type: ignore[arg-type]
        return None
    rq = ort_fields(reference)
    pad = -int(dict(rq)["input_offset"])  # type: ignore[arg-type]
    bias = folded_bias(graph, op, -pad)
    if bias is None or not -128 <= pad < 128:
        return None
    # unshifted weights: records of left shift 0 (their requantisation unused)
    records = tuple((int(b), 0, 0, 1, 0, 0) for b in bias.values)
    words = stem_weights(filter_rows(graph, op), records, in_c, k_w)
    if words is None:
        return None
    out_w = graph.tensors[op.outputs[0]].shape[2]
    pad_word = (pad & 0xFF) * 0x01010101
    stem: Params = (
        *((k, ref[k]) for k in ("stride_w", "stride_h", "pad_w", "pad_h")),
        ("pad_word", pad_word - 2**32 if pad_word >= 2**31 else pad_word),
        ("act_min", -128),
        ("act_max", 127),
        ("strip", min(STRIP, out_w)),
        ("window", window_words(in_c, k_w)),
        ("weights", Array("int32_t", words)),
    )
    return Lowered(
        reference.kernel,
        "mcu_conv_2d_stem_s8_ort",
        "mcu_conv_2d_stem_s8_ort_params_t",
        (*member("stem", stem), *member("rq", rq)),
        stem_scratch_bytes(in_c, k_w, int(ref["stride_w"]), out_w),  # type: ignore[arg-type]
        variant="conv_2d_stem_s8_ort",
        sources=("opt/conv_2d_stem_s8.c",),
        headers=("mcu/kernels/conv_2d.h",),
        pixels_in_order=True,  # as conv_2d_stem_s8: a strip widened into the band, then outputs
    )


@rung("conv_2d_s8_ort", "CONV_2D")
def conv_2d_s8_ort(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """onnxruntime's numerics: int8, one group, any filter, stride, dilation and padding but 1x1
    stride 1, |sum x scale| < 2^21 (conv_2d_s8's windows and products)."""
    if not is_ort(graph, op, reference):
        return None
    ref = fields(reference.params)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if w.shape[3] != x.shape[3] or is_pointwise_unit(graph, op, ref):
        return None
    rq = dict(ort_fields(reference))
    pad_value = -int(rq["input_offset"])  # type: ignore[arg-type]
    bias = folded_bias(graph, op, -pad_value)
    weights = laid_out_weights(graph, op)
    if bias is None or weights is None or not -128 <= pad_value < 128:
        return None
    records = tuple(v for b in bias.values for v in (int(b), 0, 0, 0, 0, 0))
    conv: Params = (
        *member(WINDOW_PARAMS, tuple((k, ref[k]) for k in WINDOW)),
        ("pad_value", pad_value),
        ("act_min", rq["act_min"]),
        ("act_max", rq["act_max"]),
        ("channels", Array("int32_t", records)),
    )
    params = (*member("conv", conv), *member("ort", ort_fields(reference)))
    depth = w.shape[1] * w.shape[2] * w.shape[3]
    return Lowered(
        reference.kernel,
        "mcu_conv_2d_s8_ort",
        "mcu_conv_2d_s8_ort_params_t",
        params,
        scratch_bytes(depth, x.shape[3]),
        variant="conv_2d_s8_ort",
        sources=("opt/conv_2d_s8.c",),
        headers=("mcu/kernels/conv_2d.h",),
        constants=weights,
        output_stride=True,
        pixels_in_order=True,  # conv_2d_s8's pairs: both windows gathered first
    )


@rung("depthwise_conv_2d_s8_ort", "DEPTHWISE_CONV_2D")
def depthwise_conv_2d_s8_ort(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """onnxruntime's numerics: int8, depth multiplier 1, dilation 1, at most 16 filter rows, any
    stride and padding, |sum x scale| < 2^21, in place too (depthwise_conv_2d_s8's band path)."""
    if not is_ort(graph, op, reference):
        return None
    ref = fields(reference.params)
    x, w, y = (graph.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if w.data is None or ref["depth_multiplier"] != 1 or w.shape[1] > MAX_ROWS:
        return None
    if ref["dilation_h"] != 1 or ref["dilation_w"] != 1:
        return None
    in_hw, out_hw = (x.shape[1], x.shape[2]), (y.shape[1], y.shape[2])
    k_h, k_w = w.shape[1], w.shape[2]
    band = band_width(ref, in_hw[1], k_w, out_hw[1])
    # in place where the registered traits allow it and the band stays ahead of the outputs
    in_place = conv_staging_bytes(graph, op) is not None and in_place_ok(ref, in_hw, k_h, out_hw)
    return Lowered(
        reference.kernel,
        "mcu_depthwise_conv_2d_s8_ort",
        reference.params_type,
        reference.params,
        8 * k_h * k_w + 4 * k_h * band,  # four channels' widened weights, k_h band rows
        variant="depthwise_conv_2d_s8_ort",
        sources=("opt/depthwise_conv_2d_s8_ort.c",),
        headers=("mcu/kernels/depthwise_conv_2d.h",),
        traits=OpTraits(staging_bytes=0) if in_place else NO_TRAITS,
    )
