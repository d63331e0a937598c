"""Optimised int8 DEPTHWISE_CONV_2D (runtime_c/kernels/opt/depthwise_conv_2d_s8.c): depth
multiplier 1, dilation 1, up to 16 filter rows, any stride and padding, in place too.

The kernel takes the reference lowering's parameters and the weights as they are (NHWC: four
channels of a tap in one word). Its scratch holds a group's widened weights and a band of k_h
padded input rows (`scratch_bytes`); the band also lets it run in place with no more scratch,
when its outputs never reach rows it has not copied yet (`in_place_ok`). Its requantisation
replaces the doubling high multiply by one SMMULR of twice the shifted sum, exact while that
doubling cannot overflow; `requant_fits` proves it at build time from the weights, the bias and
the input zero point, with a margin so that the rounding division cannot overflow either. A
model outside it keeps the reference.

3x3 layers at strides 1 and 2 whose right shifts are all at least 1 (`planar_fits`) take the
kernel's planar path instead, whatever their size: one channel at a time over four widened int16
planes (rows, or columns of a tall stride-1 SAME layer) in blocks of four, two and one outputs,
with its own scratch (`planar_bytes`).

On DSP cores such a layer in the full int8 range may instead get its own code
(`depthwise_conv_2d_s8_layer`, issue 32 item 1): model.c instantiates MCU_DW3_LAYER
(mcu/kernels/depthwise_layer.h) with the layer's shape as constants (`layer_args`), and the
kernel runs its channels and its band fill through that assembly, over a band of the whole image
(one chunk: no table of band lines, no line loop state, blocks unrolled by the assembler). Cost
model: it saves instructions on every such layer (VWW on the M4 twin: 13-23 % of each layer's), so
it is chosen wherever its whole-image band stays within WHOLE_BAND_LIMIT bytes of scratch; each
distinct shape costs one instance of code (layers with the same constants share it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from mcugen.codegen.lower import Array, LayerKernel, Lowered, Value, fields
from mcugen.codegen.lower._variants import variant
from mcugen.codegen.lower.conv_2d import conv_staging_bytes
from mcugen.model.ir import Graph, Operator
from mcugen.model.traits import NO_TRAITS, OpTraits

MAX_ROWS = 16  # MCU_DW_MAX_ROWS in the kernel: its band row pointers live on the stack
SHIFTED_LIMIT = 2**29  # |sum << left| below this: SMMULR(2a, M) and the rounding stay in int32
MAX_RIGHT = 22  # 2^29 + 2^(right-1) + 128 * 2^right stays in int32
CHUNK_OUTPUTS = 32  # MCU_DW3_OUTPUTS in the kernel


def requant_fits(graph: Graph, op: Operator, input_offset: int, shifts: Array) -> bool:
    """Every channel's largest |sum| (taps' |weight| times the largest |input + offset|, plus
    |bias|), shifted left by its shift, stays below SHIFTED_LIMIT, and no right shift exceeds
    MAX_RIGHT (the kernel adds output_offset << right before shifting)."""
    if min((int(v) for v in shifts.values), default=0) < -MAX_RIGHT:
        return False
    w = graph.tensors[op.inputs[1]].array().astype(np.int64)
    channels = w.shape[-1]
    taps = np.abs(w).reshape(-1, channels).sum(axis=0)
    reach = taps * max(127 + input_offset, 128 - input_offset)
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        reach = reach + np.abs(graph.tensors[op.inputs[2]].array().astype(np.int64).reshape(-1))
    lefts = np.maximum(np.array(shifts.values, dtype=np.int64), 0)
    lefts = np.broadcast_to(lefts, reach.shape)
    shifted = [int(r) << int(s) for r, s in zip(reach, lefts, strict=True)]
    return max(shifted, default=0) < SHIFTED_LIMIT


def band_width(ref: Mapping[str, Value], in_w: int, k_w: int, out_w: int) -> int:
    """Entries of a band row: the left padding and the image, or as far as the last window reads."""
    pad_w, stride_w = ref["pad_w"], ref["stride_w"]
    assert isinstance(pad_w, int) and isinstance(stride_w, int)
    return max(pad_w + in_w, (out_w - 1) * stride_w + k_w)


def planar_fits(ref: Mapping[str, Value], k_hw: tuple[int, int], shifts: Array) -> bool:
    """The kernel's 3x3 path (`dw3_takes`): strides 1 or 2 and every right shift at least 1;
    lines (rows, or columns by `by_columns`) of any length."""
    strides = (ref["stride_h"], ref["stride_w"])
    return k_hw == (3, 3) and all(s in (1, 2) for s in strides) and max(shifts.values) <= -1


def planar_layer(
    graph: Graph, op: Operator, reference: Lowered
) -> tuple[Mapping[str, Value], tuple[int, int], tuple[int, int]] | None:
    """The reference's fields and the input's and output's (height, width) of a layer the 3x3
    path takes (`planar_fits`), else None."""
    ref = fields(reference.params)
    shifts = ref["shifts"]
    assert isinstance(shifts, Array)
    x, w, y = (graph.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if not planar_fits(ref, (w.shape[1], w.shape[2]), shifts):
        return None
    return ref, (x.shape[1], x.shape[2]), (y.shape[1], y.shape[2])


def by_columns(in_hw: tuple[int, int], out_hw: tuple[int, int]) -> bool:
    """The 3x3 path runs along columns when the output is taller than wide and as large as the
    input (`dw3_by_columns`: it may then still run in place), else along rows."""
    return out_hw[0] > out_hw[1] and in_hw == out_hw


def planar_bytes(ref: Mapping[str, Value], in_hw: tuple[int, int], out_hw: tuple[int, int]) -> int:
    """The 3x3 path's scratch (`dw3_setup`): a chunk's table of band lines (three int32 offsets
    an output line), then four planes of `ring` lines of `bw` int16 entries; lines are rows, or
    columns when the output is taller than wide, and a chunk of output lines aims at
    CHUNK_OUTPUTS outputs a channel."""
    pad, stride = (ref["pad_h"], ref["pad_w"]), (ref["stride_h"], ref["stride_w"])
    along = 0 if by_columns(in_hw, out_hw) else 1  # the axis a line runs along
    lines, length = out_hw[1 - along], out_hw[along]
    pad_along, s_across, s_along = pad[along], stride[1 - along], stride[along]
    assert isinstance(pad_along, int) and isinstance(s_across, int) and isinstance(s_along, int)
    chunk = min(lines, -(-CHUNK_OUTPUTS // length))
    ring = (chunk - 1) * s_across + 3
    bw = max(pad_along + in_hw[along], s_along * length + 2)
    bw += bw & 1
    return 12 * chunk + 4 * ring * bw * 2


def scratch_bytes(
    ref: Mapping[str, Value],
    in_hw: tuple[int, int],
    k_hw: tuple[int, int],
    out_hw: tuple[int, int],
    shifts: Array,
) -> int:
    """The 3x3 path's planes where it runs, else four channels' widened weights (8 bytes a tap),
    then k_h band rows of 4-byte entries."""
    if planar_fits(ref, k_hw, shifts):
        return planar_bytes(ref, in_hw, out_hw)
    k_h, k_w = k_hw
    return 8 * k_h * k_w + 4 * k_h * band_width(ref, in_hw[1], k_w, out_hw[1])


def in_place_ok(
    ref: Mapping[str, Value],
    in_hw: tuple[int, int],
    k_h: int,
    out_hw: tuple[int, int],
    by_cols: bool = False,
) -> bool:
    """Output row oy ends at flat pixel (oy + 1) * out_w, which must not pass the first input row
    the band has not copied (oy * stride_h - pad_h + k_h) while rows remain to copy: the kernel's
    `in_place_ok`, which checks it again at run time. Along columns (`by_cols`, the 3x3 path on a
    tall output) the shapes must be equal, so that output column ox lands on input column ox,
    and that column copied already (below ox * stride_w - pad_w + 3) while columns remain."""
    if by_cols:
        stride_w, pad_w = ref["stride_w"], ref["pad_w"]
        assert isinstance(stride_w, int) and isinstance(pad_w, int)
        ahead = all(
            ox * stride_w - pad_w + 3 >= in_hw[1] or ox < ox * stride_w - pad_w + 3
            for ox in range(out_hw[1])
        )
        return in_hw == out_hw and ahead
    stride_h, pad_h = ref["stride_h"], ref["pad_h"]
    assert isinstance(stride_h, int) and isinstance(pad_h, int)
    (in_h, in_w), (out_h, out_w) = in_hw, out_hw
    for oy in range(out_h):
        copied = oy * stride_h - pad_h + k_h
        if copied < in_h and (oy + 1) * out_w > copied * in_w:
            return False
    return True


#: cores whose builds have the DSP extension (mcu/simd.h MCU_SIMD_DSP), which the layer
#: assembly is written for
DSP_CORES = frozenset({"cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"})
#: the largest band of the whole image a specialised layer may add to its step's scratch
#: (4 planes of int16): the cost model's RAM side. VWW's 24x24 and smaller layers fit with no arena
#: growth; its 48x48 layers (20 KB bands) would save 70 k instructions for 18 KB more RAM
WHOLE_BAND_LIMIT = 6144
#: The strides a layer is specialised at, the cost model's code side (the assembly also takes
#: stride 2; the tests widen this to keep that path exact). Measured on VWW on the M4
#: twin, a stride-1 instance saved 34-193 instructions per byte of code it adds (24x24x32:
#: 66 k for 1,970 B; the five 6x6x128 layers share one 602-byte instance for 116 k), a stride-2
#: one 19-26 (12x12x32: 27 k for 1,292 B); with both, person_detect's code on the M4 twin was
#: 31,284 B, over half of TFLM+CMSIS-NN's 59,892 (28,800 B with stride 1 only)
LAYER_STRIDES = frozenset({1})


def line_axes(
    ref: Mapping[str, Value], in_hw: tuple[int, int], out_hw: tuple[int, int]
) -> tuple[int, int, int, int, int, int]:
    """The 3x3 path's lines (`dw3_setup`): (input length, output length, lines, stride along,
    stride across, padding along): rows, or columns when `by_columns`."""
    along = 0 if by_columns(in_hw, out_hw) else 1
    pad = (ref["pad_h"], ref["pad_w"])[along]
    s_along, s_across = (
        ref[("stride_h", "stride_w")[along]],
        ref[("stride_h", "stride_w")[1 - along]],
    )
    assert isinstance(pad, int) and isinstance(s_along, int) and isinstance(s_across, int)
    return in_hw[along], out_hw[along], out_hw[1 - along], s_along, s_across, pad


def whole_band(
    ref: Mapping[str, Value], in_hw: tuple[int, int], out_hw: tuple[int, int]
) -> tuple[int, int]:
    """Entries of a band line, lines of the band, when the band holds every input line:
    `planar_bytes` with one chunk."""
    in_len, n, lines, s_along, s_across, pad = line_axes(ref, in_hw, out_hw)
    bw = max(pad + in_len, s_along * n + 2)
    return bw + (bw & 1), (lines - 1) * s_across + 3


def layer_args(
    ref: Mapping[str, Value], in_hw: tuple[int, int], out_hw: tuple[int, int], ch: int
) -> tuple[int, ...] | None:
    """MCU_DW3_LAYER's constants, or None where the layer assembly's immediates cannot reach
    (LDRD offsets up to 1020: a window's third line and its last block; LDR, STRB and ADD
    offsets up to 4095; MOVW up to 65535). The rows': along, across, n, lines, band bytes,
    output step, skip; the fill's: source step, pixels a line, odd padding, plane bytes, source
    and band skips (depthwise_layer.h)."""
    bw, ring = whole_band(ref, in_hw, out_hw)
    in_len, n, lines, along, across, pad = line_axes(ref, in_hw, out_hw)
    cols = by_columns(in_hw, out_hw)
    step, line = (out_hw[1] * ch, ch) if cols else (ch, out_hw[1] * ch)
    src_step, src_line = (in_hw[1] * ch, ch) if cols else (ch, in_hw[1] * ch)
    band, skip, plane = 2 * bw, line - n * step, 2 * ring * bw
    fill = (src_step, in_len, pad & 1, plane, src_line - in_len * src_step, band - 2 * in_len)
    if 2 * band + 2 * along * n + 16 > 1020 or max(4 * step, 4 * src_step, across * band) > 4095:
        return None
    if max(abs(skip), plane, abs(fill[4])) > 65535:
        return None
    return (along, across, n, lines, band, step, skip, *fill)


@variant(
    "depthwise_conv_2d_s8_layer",
    "DEPTHWISE_CONV_2D",
    cores=DSP_CORES,
    handles="what depthwise_conv_2d_s8's 3x3 path takes at stride 1 in the full int8 range "
    f"with a whole-image band of at most {WHOLE_BAND_LIMIT} bytes: its assembly specialised per "
    "layer",
)
def depthwise_conv_2d_s8_layer(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """The general variant's lowering with a band of the whole image (planar scratch of one
    chunk) and the layer's own assembly (mcu/kernels/depthwise_layer.h)."""
    general = depthwise_conv_2d_s8(graph, op, reference)
    planar = planar_layer(graph, op, reference) if general is not None else None
    if general is None or planar is None:
        return None
    ref, in_hw, out_hw = planar
    if ref["act_min"] != -128 or ref["act_max"] != 127:
        return None
    if not {ref["stride_h"], ref["stride_w"]} <= LAYER_STRIDES:  # the cost model's code side
        return None
    bw, ring = whole_band(ref, in_hw, out_hw)
    scratch = 12 * line_axes(ref, in_hw, out_hw)[2] + 8 * ring * bw
    args = layer_args(ref, in_hw, out_hw, graph.tensors[op.outputs[0]].shape[3])
    if args is None or scratch > WHOLE_BAND_LIMIT:
        return None
    return replace(
        general,
        function="mcu_depthwise_conv_2d_s8_layer",
        scratch_bytes=max(scratch, general.scratch_bytes),
        variant="depthwise_conv_2d_s8_layer",
        layer=LayerKernel("MCU_DW3_LAYER", args, "mcu_depthwise_conv_2d_s8_layer"),
    )


@variant(
    "depthwise_conv_2d_s8",
    "DEPTHWISE_CONV_2D",
    handles="int8, depth multiplier 1, dilation 1, at most 16 filter rows, any stride and "
    "padding, in place too; sums within 2^29 after the requantisation's left shift",
)
def depthwise_conv_2d_s8(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    if reference.function != "mcu_depthwise_conv_2d_int8":
        return None
    ref = fields(reference.params)
    w = graph.tensors[op.inputs[1]]
    if w.data is None or ref["depth_multiplier"] != 1:
        return None
    if ref["dilation_h"] != 1 or ref["dilation_w"] != 1 or w.shape[1] > MAX_ROWS:
        return None
    shifts = ref["shifts"]
    assert isinstance(shifts, Array)
    input_offset = ref["input_offset"]
    assert isinstance(input_offset, int)
    if not requant_fits(graph, op, input_offset, shifts):
        return None
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    in_hw, out_hw, k_hw = (
        (x.shape[1], x.shape[2]),
        (y.shape[1], y.shape[2]),
        (w.shape[1], w.shape[2]),
    )
    # in place as the registered traits allow (batch 1, no more output than input pixels), and
    # only where the band stays ahead of the outputs; no staging beyond the scratch
    registered = conv_staging_bytes(graph, op)
    traits = (
        OpTraits(staging_bytes=0)
        if registered is not None
        and in_place_ok(
            ref,
            in_hw,
            k_hw[0],
            out_hw,
            planar_fits(ref, k_hw, shifts) and by_columns(in_hw, out_hw),
        )
        else NO_TRAITS
    )
    return Lowered(
        reference.kernel,
        "mcu_depthwise_conv_2d_s8_opt",
        reference.params_type,
        reference.params,
        scratch_bytes(ref, in_hw, k_hw, out_hw, shifts),
        variant="depthwise_conv_2d_s8",
        sources=("opt/depthwise_conv_2d_s8.c",),
        headers=("mcu/kernels/depthwise_layer.h",),  # the kernel's entry for layer kernels
        traits=traits,
    )
