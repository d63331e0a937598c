"""TRANSPOSE_CONV: int8 (per-channel or per-tensor weights, int32 bias) and float32.

Inputs are (output_shape, weights [O,KH,KW,C], input [N,H,W,C], optional bias). As in TFLM, the
output tensor's shape is what counts (output_shape is not read), the padding is
ComputePaddingHeightWidth run over the *output* size with dilation 1, and the int8 kernel
accumulates in an int32 scratch buffer of one element per output element.
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import inp, out, req
from mcugen.codegen.lower.conv_2d import (
    check_4d,
    check_bias,
    check_channels,
    check_input_count,
    check_types,
    check_window_arithmetic,
    type_params,
    window_params,
)
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_transpose_conv_params_t"
ACC_BYTES = 4  # int32 accumulator per output element


@register("TRANSPOSE_CONV")
def lower_transpose_conv(graph: Graph, op: Operator) -> Lowered:
    check_input_count(op, 3)
    w, x, y = req(graph, op, 1), req(graph, op, 2), out(graph, op)
    req(graph, op, 0)
    bias = inp(graph, op, 3)
    dtype = check_types(op, x, w, y, bias)
    check_4d(op, x, w, y)
    out_c, k_h, k_w, in_c = w.shape
    check_channels(op, "filter input depth", in_c, x.shape[3])
    check_channels(op, "output depth", y.shape[3], out_c)
    check_channels(op, "output batch", y.shape[0], x.shape[0])
    check_bias(op, bias, out_c)
    window = window_params(op, (y.shape[1], y.shape[2]), (k_h, k_w), dilated=False)
    ints = {name: value for name, value in window if isinstance(value, int)}
    for i, axis in ((1, "h"), (2, "w")):
        stride, pad = ints[f"stride_{axis}"], ints[f"pad_{axis}"]
        check_window_arithmetic(op, y.shape[i], w.shape[i], stride, 1, x.shape[i], pad)
    params = tuple(kv for kv in window if not kv[0].startswith("dilation"))
    params += type_params(op, x, w, y, 0, bias)
    if dtype == "float32":
        return Lowered("transpose_conv", "mcu_transpose_conv_f32", PARAMS, params)
    scratch = y.num_elements * ACC_BYTES
    return Lowered("transpose_conv", "mcu_transpose_conv_int8", PARAMS, params, scratch)
