"""The general int8 CONV_2D's rung with no scratch: `conv_2d_s8_lean`
(runtime_c/kernels/opt/conv_2d_s8_lean.c). It reads the input and the filter where they are (the
filter as the model stores it: no relaid constants) and skips the taps in the padding, adding
the input offset to each input in registers (SXTAB16) rather than folding it into the bias; its
records (`opt_conv_2d.channel_records` with `folded=False`) hold the layer's own bias, and the
build's bound on the accumulator counts inputs plus the offset (up to 255 in magnitude).

Registered after conv_2d_s8_col (this module imports opt_conv_2d first), so speed first never
picks it; on the ladder of kernels chosen for memory (mcugen/kernel_choice.py) it is the rung
below the byte windows, where the reference kernel (same scratch, about 20 times the
instructions) was the only one with none; the reference kernel then leaves the ladder.
"""

from __future__ import annotations

import numpy as np

from mcugen.codegen.lower import Lowered, fields
from mcugen.codegen.lower._rung import rung
from mcugen.codegen.lower.opt_conv_2d import (
    PARAMS,
    conv_2d_s8_col,
    is_pointwise_unit,
)
from mcugen.codegen.lower.opt_conv_2d import record_params as _record_params
from mcugen.codegen.lower.opt_mat_mult import _read_alike, filter_rows
from mcugen.model.ir import Graph, Operator

NAME = "conv_2d_s8_lean"
HEADER = "mcu/opt/conv_2d_s8_lean.h"
#: the rung it follows on a ladder (imported above so that it registers first)
ABOVE = conv_2d_s8_col


@rung(NAME, "CONV_2D")
def conv_2d_s8_lean(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8, one group, any filter, stride, dilation and padding but 1x1 stride 1; the input and
    filter read as they are, no scratch, never in place."""
    if reference.function != "mcu_conv_2d_int8":
        return None
    ref = fields(reference.params)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if w.shape[3] != x.shape[3] or w.data is None or w.dtype != "int8":
        return None
    if is_pointwise_unit(graph, op, ref):
        return None
    params = _record_params(graph, op, ref, folded=False)
    if params is None:
        return None
    return Lowered(
        reference.kernel,
        "mcu_conv_2d_s8_lean",
        PARAMS,
        params,
        0,
        variant=NAME,
        sources=(f"opt/{NAME}.c",),
        headers=("mcu/kernels/conv_2d.h", HEADER),
        output_stride=True,
        pixels_in_order=True,
    )


@rung("depthwise_as_conv_s8_lean", "DEPTHWISE_CONV_2D")
def depthwise_as_conv_lean(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8 with one input channel and several outputs, no scratch

    A depthwise convolution of one input channel is a convolution of one input channel
    (opt_conv_2d.depthwise_as_conv); conv_2d_s8_lean runs it over the filter's columns stored
    as the convolution's rows [O][KH][KW][1] (`filter_rows`): the rung below
    depthwise_as_conv_s8, where the reference kernel was the only one without scratch.
    micro_speech's 8x10 layer of 8 outputs, M4 twin: 2.62 instructions a MAC, against 2.66 for
    depthwise_as_conv_s8 (400 bytes of scratch) and about 28 for the reference kernel. Never in
    place."""
    if reference.function != "mcu_depthwise_conv_2d_int8":
        return None
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if x.shape[3] != 1 or w.shape[3] < 2 or w.data is None or w.dtype != "int8":
        return None
    if not _read_alike(graph, op.inputs[1]):
        return None
    params = _record_params(graph, op, fields(reference.params), folded=False)
    if params is None:
        return None
    rows = np.ascontiguousarray(filter_rows(graph, op), dtype=np.int8).tobytes()
    return Lowered(
        "conv_2d",
        "mcu_conv_2d_s8_lean",
        PARAMS,
        params,
        0,
        variant="depthwise_as_conv_s8_lean",
        sources=(f"opt/{NAME}.c",),
        headers=("mcu/kernels/conv_2d.h", HEADER),
        constants=((op.inputs[1], rows),),
        output_stride=True,
        pixels_in_order=True,
    )
