"""Optimised int8 DEPTHWISE_CONV_2D (runtime_c/kernels/opt/depthwise_conv_2d_s8.c): depth
multiplier 1, dilation 1, up to 64 taps, any stride and padding, in place too.

The kernel takes the reference lowering's parameters and the weights as they are (NHWC: four
channels of a tap in one word). Its requantisation replaces the doubling high multiply by one
SMMULR of twice the shifted sum, exact while that doubling cannot overflow; `requant_fits`
proves it at build time from the weights, the bias and the input zero point, with a margin so
that the rounding division cannot overflow either. A model outside it keeps the reference.
"""

from __future__ import annotations

import numpy as np

from mcugen.codegen.lower import Array, Lowered
from mcugen.codegen.lower._variants import variant
from mcugen.model.ir import Graph, Operator

MAX_TAPS = 64  # DW_MAX_TAPS in the kernel: its widened weights live on the stack
SHIFTED_LIMIT = 2**29  # |sum << left| below this: SMMULR(2a, M) and the rounding stay in int32


def requant_fits(graph: Graph, op: Operator, input_offset: int, shifts: Array) -> bool:
    """Every channel's largest |sum| (taps' |weight| times the largest |input + offset|, plus
    |bias|), shifted left by its shift, stays below SHIFTED_LIMIT."""
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


@variant(
    "depthwise_conv_2d_s8",
    "DEPTHWISE_CONV_2D",
    handles="int8, depth multiplier 1, dilation 1, at most 64 taps, any stride and padding, "
    "in place too; sums within 2^29 after the requantisation's left shift",
)
def depthwise_conv_2d_s8(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    if reference.function != "mcu_depthwise_conv_2d_int8":
        return None
    ref = dict(reference.params)
    w = graph.tensors[op.inputs[1]]
    if w.data is None or ref["depth_multiplier"] != 1:
        return None
    if ref["dilation_h"] != 1 or ref["dilation_w"] != 1 or w.shape[1] * w.shape[2] > MAX_TAPS:
        return None
    shifts = ref["shifts"]
    assert isinstance(shifts, Array)
    input_offset = ref["input_offset"]
    assert isinstance(input_offset, int)
    if not requant_fits(graph, op, input_offset, shifts):
        return None
    return Lowered(
        reference.kernel,
        "mcu_depthwise_conv_2d_s8_opt",
        reference.params_type,
        reference.params,
        reference.scratch_bytes,
        variant="depthwise_conv_2d_s8",
        sources=("opt/depthwise_conv_2d_s8.c",),
    )
