"""The optimised general int8 CONV_2D (runtime_c/kernels/opt/conv_2d_s8.c): any filter, stride,
dilation and padding, one group; 1x1 stride-1 convolutions stay with conv_2d_1x1_s8.

The kernel expands the windows of two output pixels into 16-bit lanes in its scratch (im2col),
taps outside the image written as the input zero point, and multiplies them by the filter in
its own layout (`conv_layout`). Padded taps then hold zero point + input offset = 0, as the
reference kernel's skipped taps contribute nothing, so folding input_offset * (the whole filter
row) into the bias is exact for every window, edge ones included. Each output channel gets a
record (`channel_records`) of its bias and requantisation constants; the kernel's shortcuts
(SMMLAR of the accumulator shifted left by one more bit, the output offset inside the rounding
constant) are exact when the accumulator and the sums stay within int32, which the build proves
from the weights (`exact_bounds`); a layer where they might not keeps the reference kernel.
Scratch: the pair's words (16 bytes per block of four depth values), and one window of bytes
when in_c is not a multiple of 4.

Importing opt_mat_mult first registers its variants first, so conv_2d_1x1_s8 is tried before
this one (the first variant that accepts an operator wins).
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from mcugen.codegen.lower import Array, Lowered, Value, fields, member
from mcugen.codegen.lower._common import WINDOW_PARAMS
from mcugen.codegen.lower._conv_stem import (
    STRIP,
    applies,
    stem_scratch_bytes,
    stem_weights,
    window_words,
)
from mcugen.codegen.lower._rung import rung
from mcugen.codegen.lower.opt_mat_mult import _read_alike, filter_rows, folded_bias
from mcugen.model.ir import Graph, Operator

NAME = "conv_2d_s8"
PARAMS = "mcu_conv_2d_s8_params_t"
WINDOW = ("stride_w", "stride_h", "dilation_w", "dilation_h", "pad_w", "pad_h")
INT32_MAX = 2**31 - 1


def _align4(n: int) -> int:
    return (n + 3) & ~3


def _int(ref: dict[str, Value], key: str) -> int:
    value = ref[key]
    assert isinstance(value, int), (key, value)
    return value


def is_pointwise_unit(graph: Graph, op: Operator, ref: dict[str, Value]) -> bool:
    """1x1, stride 1, no padding: conv_2d_1x1_s8's shape (and the reference's in-place one)."""
    w = graph.tensors[op.inputs[1]]
    unit = ref["stride_h"] == ref["stride_w"] == 1 and ref["pad_h"] == ref["pad_w"] == 0
    return w.shape[1] == w.shape[2] == 1 and unit


def _pair_blocks(pair: np.ndarray) -> np.ndarray:
    """Two channels' first 4q weights as [block][word a, word b][4 bytes]: a.k0 b.k0 a.k2 b.k2,
    then a.k1 b.k1 a.k3 b.k3."""
    blocks = pair.reshape(2, -1, 2, 2)  # channel, block, k-high, k-low
    return blocks.transpose(1, 3, 2, 0).reshape(-1, 2, 4)  # block, k-low, k-high, channel


def conv_layout(rows: np.ndarray) -> bytes:
    """Filter rows [C][K] for the kernel, K = 4q + r: first each channel's last r weights; then
    per group of four channels and block j of four depth values k0..k3, the first pair's word
    (k0, k2), the second pair's, the first pair's (k1, k3) and the second's, where a pair's words
    are a.k0 b.k0 a.k2 b.k2 and a.k1 b.k1 a.k3 b.k3 (`_pair_blocks`); then a last pair's blocks;
    then an odd last channel's blocks as they are."""
    channels, depth = rows.shape
    full = depth - depth % 4
    out: list[np.ndarray] = [rows[:, full:].reshape(-1)]
    for c in range(0, channels - 3, 4):
        first, second = (
            _pair_blocks(rows[c : c + 2, :full]),
            _pair_blocks(rows[c + 2 : c + 4, :full]),
        )
        out.append(np.stack([first, second], axis=2).reshape(-1))  # block, word, pair, bytes
    c = channels - channels % 4
    if channels % 4 >= 2:
        out.append(_pair_blocks(rows[c : c + 2, :full]).reshape(-1))
    if channels % 2:
        out.append(rows[-1, :full])
    return np.concatenate(out).astype(np.int8).tobytes()


@functools.lru_cache(maxsize=256)
def _laid_out(data: bytes, dtype: str, shape: tuple[int, ...], depthwise: bool) -> bytes:
    rows = np.frombuffer(data, dtype=np.int8).reshape(shape).astype(np.int64)
    rows = rows.reshape(-1, shape[-1]).T if depthwise else rows.reshape(shape[0], -1)
    return conv_layout(rows)


def laid_out_weights(graph: Graph, op: Operator) -> tuple[tuple[int, bytes], ...] | None:
    """The filter in `conv_layout`, None when an operator other than a tile of this one reads
    it (opt_mat_mult's rule)."""
    index = op.inputs[1]
    w = graph.tensors[index]
    if not _read_alike(graph, index) or w.data is None or w.dtype != "int8":
        return None
    data = _laid_out(w.data, w.dtype, w.shape, op.opcode == "DEPTHWISE_CONV_2D")
    assert len(data) == len(w.data), "a layout keeps every weight"
    return ((index, data),)


def channel_records(
    graph: Graph, op: Operator, ref: dict[str, Value], folded: bool = True
) -> tuple[tuple[int, ...], ...] | None:
    """Per output channel: bias, multiplier, left shift + 1, right shift, 2^(right-1) +
    output_offset * 2^right, sign mask (mcu/kernels/conv_2d.h); None when the bias does not fit
    or `exact_bounds` fails. `folded`: the input offset folded into the bias (the kernel adds
    raw inputs, padding the input zero point), else the layer's own bias (it adds inputs plus
    the offset: opt_conv_lean.py)."""
    offset_in = _int(ref, "input_offset")
    bias = folded_bias(graph, op, offset_in if folded else 0)
    multipliers, shifts = ref["multipliers"], ref["shifts"]
    if bias is None or not isinstance(multipliers, Array) or not isinstance(shifts, Array):
        return None
    largest = 128 if folded else max(abs(offset_in - 128), abs(offset_in + 127))
    peaks = largest * np.abs(filter_rows(graph, op)).sum(axis=1)
    offset = _int(ref, "output_offset")
    records = []
    for c, b in enumerate(bias.values):
        ch = c if len(multipliers.values) > 1 else 0
        m, shift = int(multipliers.values[ch]), int(shifts.values[ch])
        left, right = max(shift, 0) + 1, max(-shift, 0)
        constant = (1 << right >> 1) + offset * (1 << right)
        if not exact_bounds(abs(int(b)) + int(peaks[c]), m, left, right, constant):
            return None
        records.append((int(b), m, left, right, constant, -1 if right else 0))
    return tuple(records)


def exact_bounds(acc_peak: int, multiplier: int, left: int, right: int, constant: int) -> bool:
    """The kernel's requantisation equals TFLM's: the accumulator (at most `acc_peak` in
    magnitude) shifted left by `left` fits in int32, the multiplier is QuantizeMultiplier's,
    and SMMLAR's sum with the constant stays within int32."""
    if not 0 <= multiplier <= INT32_MAX or not 0 <= right <= 31:
        return False
    shifted = acc_peak << left
    high = (shifted * multiplier >> 32) + 1
    return shifted <= INT32_MAX and high + abs(constant) + 1 <= INT32_MAX


def record_params(
    graph: Graph, op: Operator, ref: dict[str, Value], folded: bool = True
) -> tuple[tuple[str, Value], ...] | None:
    """mcu_conv_2d_s8_params_t's fields (`channel_records`' `folded`), None when the kernels
    cannot run the operator."""
    pad_value = -_int(ref, "input_offset")
    records = channel_records(graph, op, ref, folded)
    if not -128 <= pad_value < 128 or records is None:
        return None
    return member(WINDOW_PARAMS, tuple((k, ref[k]) for k in WINDOW)) + (
        ("pad_value", pad_value),
        ("act_min", ref["act_min"]),
        ("act_max", ref["act_max"]),
        ("channels", Array("int32_t", tuple(v for r in records for v in r))),
    )


def conv_params(
    graph: Graph, op: Operator, reference: Lowered
) -> tuple[tuple[tuple[str, Value], ...], tuple[tuple[int, bytes], ...]] | None:
    """The kernel's parameters and laid-out filter, None when it cannot run the operator."""
    params = record_params(graph, op, fields(reference.params))
    weights = laid_out_weights(graph, op)
    if params is None or weights is None:
        return None
    return params, weights


def scratch_bytes(depth: int, in_c: int) -> int:
    """The pair's words (16 bytes per block of four depth values, the last block padded) and,
    when in_c is not a multiple of 4, one window of bytes."""
    words = 16 * ((depth + 3) // 4)
    return words + (_align4(depth) if in_c % 4 else 0)


@rung("conv_2d_stem_s8", "CONV_2D", "DEPTHWISE_CONV_2D")
def conv_2d_stem(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8 first layers: a filter of three rows over one or three input channels (a depthwise
    one of one input channel and several outputs too), dilation 1.

    runtime_c/kernels/opt/conv_2d_stem_s8.c: the input widened once per strip into a band of
    16-bit columns, the weights as 16-bit pairs in its lanes (`_conv_stem`)."""
    if reference.function not in ("mcu_conv_2d_int8", "mcu_depthwise_conv_2d_int8"):
        return None
    ref = fields(reference.params)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    depthwise = op.opcode == "DEPTHWISE_CONV_2D"
    in_c, k_w = x.shape[3], w.shape[2]
    if depthwise and (in_c != 1 or w.shape[3] < 2) or not depthwise and w.shape[3] != in_c:
        return None
    dilation = (_int(ref, "dilation_h"), _int(ref, "dilation_w"))
    if not applies(in_c, w.shape[1], dilation) or is_pointwise_unit(graph, op, ref):
        return None
    pad = -_int(ref, "input_offset")
    records = channel_records(graph, op, ref) if w.data is not None and w.dtype == "int8" else None
    if not -128 <= pad < 128 or records is None:
        return None
    words = stem_weights(filter_rows(graph, op), records, in_c, k_w)
    if words is None:
        return None
    pad &= 0xFF
    pad_word = pad * 0x01010101
    stride_w = _int(ref, "stride_w")
    out_w = graph.tensors[op.outputs[0]].shape[2]
    return Lowered(
        "conv_2d",
        "mcu_conv_2d_stem_s8_opt",
        "mcu_conv_2d_stem_s8_params_t",
        (
            ("stride_w", stride_w),
            ("stride_h", ref["stride_h"]),
            ("pad_w", ref["pad_w"]),
            ("pad_h", ref["pad_h"]),
            ("pad_word", pad_word - 2**32 if pad_word >= 2**31 else pad_word),
            ("act_min", ref["act_min"]),
            ("act_max", ref["act_max"]),
            ("strip", min(STRIP, out_w)),
            ("window", window_words(in_c, k_w)),
            ("weights", Array("int32_t", words)),
        ),
        stem_scratch_bytes(in_c, k_w, stride_w, out_w),
        variant="conv_2d_stem_s8",
        sources=("opt/conv_2d_stem_s8.c",),
        headers=("mcu/kernels/conv_2d.h",),
        pixels_in_order=True,  # a strip's windows widened into the band, then its outputs
    )


@rung(NAME, "CONV_2D")
def conv_2d_s8(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8, one group, any filter, stride, dilation and padding but 1x1 stride 1."""
    if reference.function != "mcu_conv_2d_int8":
        return None
    ref = fields(reference.params)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if w.shape[3] != x.shape[3] or is_pointwise_unit(graph, op, ref):
        return None
    lowered = conv_params(graph, op, reference)
    if lowered is None:
        return None
    params, weights = lowered
    depth = w.shape[1] * w.shape[2] * w.shape[3]
    return Lowered(
        reference.kernel,
        "mcu_conv_2d_s8_opt",
        PARAMS,
        params,
        scratch_bytes(depth, x.shape[3]),
        variant=NAME,
        sources=(f"opt/{NAME}.c",),
        constants=weights,
        output_stride=True,  # as conv_2d_s8_col and _col2, which take its lowering
        pixels_in_order=True,  # a pair's windows gathered, then its outputs (col, col2 alike)
    )


@rung("conv_2d_s8_col2", "CONV_2D")
def conv_2d_s8_col2(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """what conv_2d_s8 takes, two pixels' windows of bytes as scratch (half its scratch),
    widened in registers.

    runtime_c/kernels/opt/conv_2d_s8_col2.c: conv_2d_s8's parameters and filter layout, its
    scratch two windows of bytes; the rung between conv_2d_s8 and conv_2d_s8_col on the ladder
    of kernels chosen for memory (registered after conv_2d_s8, so speed first never picks it)."""
    return byte_windows(graph, op, conv_2d_s8(graph, op, reference), 2, "conv_2d_s8_col2")


@rung("conv_2d_s8_col", "CONV_2D")
def conv_2d_s8_col(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """what conv_2d_s8 takes, one pixel's window of bytes as scratch (a quarter of its scratch),
    widened in registers.

    runtime_c/kernels/opt/conv_2d_s8_col.c: as conv_2d_s8_col2, one window of bytes."""
    return byte_windows(graph, op, conv_2d_s8(graph, op, reference), 1, "conv_2d_s8_col")


def byte_windows(
    graph: Graph, op: Operator, fast: Lowered | None, windows: int, name: str
) -> Lowered | None:
    """`fast` (conv_2d_s8's lowering: its parameters and filter layout) run by conv_2d_s8_col2.c
    (`windows` 2) or conv_2d_s8_col.c (1), whose scratch is that many windows of bytes
    (`col_scratch_bytes`); None when `fast` is."""
    if fast is None:
        return None
    w = graph.tensors[op.inputs[1]]
    kernel = "conv_2d_s8_col2" if windows == 2 else "conv_2d_s8_col"
    return replace(
        fast,
        function=f"mcu_{kernel}",
        scratch_bytes=windows * col_scratch_bytes(w.shape[1] * w.shape[2] * w.shape[3]),
        variant=name,
        sources=(f"opt/{kernel}.c",),
        headers=("mcu/kernels/conv_2d.h",),
    )


def col_scratch_bytes(depth: int) -> int:
    """One window of `depth` bytes, rounded up to whole words (the last word's spare bytes 0)."""
    return _align4(depth)


@rung("depthwise_as_conv_s8", "DEPTHWISE_CONV_2D")
def depthwise_as_conv(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8 with one input channel (so a depth multiplier equal to the output depth): the same
    sums as a convolution of one input channel, run by conv_2d_s8's kernel.

    A depthwise convolution of one input channel: output channel m sums taps of that channel
    with filter[0, ky, kx, m], exactly a CONV_2D whose filter row m is that filter's column m
    (`filter_rows` transposes it; relaid_weights stores it in the pair layout)."""
    if reference.function != "mcu_depthwise_conv_2d_int8":
        return None
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    # one input channel, several outputs (one output: depthwise_conv_2d_s8 takes it)
    if x.shape[3] != 1 or w.shape[3] < 2:
        return None
    lowered = conv_params(graph, op, reference)
    if lowered is None:
        return None
    params, weights = lowered
    return Lowered(
        "conv_2d",
        "mcu_conv_2d_s8_opt",
        PARAMS,
        params,
        scratch_bytes(w.shape[1] * w.shape[2], 1),
        variant="depthwise_as_conv_s8",
        sources=(f"opt/{NAME}.c",),
        headers=("mcu/kernels/conv_2d.h",),
        constants=weights,
        output_stride=True,
        pixels_in_order=True,
    )
