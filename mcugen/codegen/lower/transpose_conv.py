"""TRANSPOSE_CONV: int8 (per-channel or per-tensor weights, int32 bias), int16 x int8 (int64 or
int16 bias) and float32.

Inputs are (output_shape, weights [O,KH,KW,C], input [N,H,W,C], optional bias). As in TFLM, the
output tensor's shape is what counts (output_shape is not read), the padding is
ComputePaddingHeightWidth run over the *output* size with dilation 1, and the int8 kernel
accumulates in an int32 scratch buffer of one element per output element.

The 16x8 kernel (TFLM's TransposeConv<int64_t>) accumulates in an int64 scratch buffer whatever
the bias type or the options' quantized_bias_type: TFLM widens an int16 bias to int64 and reads
any other bias as int64, so an int32 one (read past its end there) is rejected.
"""

from __future__ import annotations

from mcugen.codegen.lower import Array, Lowered, fields, register
from mcugen.codegen.lower._common import (
    check_int64_accumulator,
    check_int64_shifts,
    inp,
    out,
    req,
    unsupported,
)
from mcugen.codegen.lower.conv_2d import (
    CONV_TYPES,
    check_4d,
    check_bias,
    check_channels,
    check_input_count,
    check_types,
    check_window_arithmetic,
    type_params,
    window_params,
)
from mcugen.model.ir import Graph, Operator, Tensor

PARAMS = "mcu_transpose_conv_params_t"
ACC_BYTES = {"int8": 4, "int16": 8}  # int32 or int64 accumulator per output element
INT16_BIAS_FUNCTIONS = {
    "int64": "mcu_transpose_conv_int16",
    "int16": "mcu_transpose_conv_int16_bias16",
}


def _check_int16_bias(op: Operator, x: Tensor, bias: Tensor | None) -> Tensor | None:
    """The bias `check_types` may see: a 16x8 bias is int64 or int16 (TFLM widens the latter),
    which `check_types` does not know, so an int16 one is checked here and hidden from it."""
    if x.dtype != "int16" or bias is None:
        return bias
    if bias.dtype not in INT16_BIAS_FUNCTIONS:
        raise unsupported(op, f"int16 with a {bias.dtype} bias (TFLM reads it as int64)")
    return bias if bias.dtype == "int64" else None


@register("TRANSPOSE_CONV", types=CONV_TYPES, data_input=2)
def lower_transpose_conv(graph: Graph, op: Operator) -> Lowered:
    check_input_count(op, 3)
    w, x, y = req(graph, op, 1), req(graph, op, 2), out(graph, op)
    req(graph, op, 0)
    bias = inp(graph, op, 3)
    dtype = check_types(op, x, w, y, _check_int16_bias(op, x, bias), int16=True)
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
    scratch = y.num_elements * ACC_BYTES[dtype]
    if dtype == "int8":
        return Lowered("transpose_conv", "mcu_transpose_conv_int8", PARAMS, params, scratch)
    shifts = fields(params)["shifts"]
    assert isinstance(shifts, Array)
    check_int64_shifts(op, shifts)
    check_int64_accumulator(op, w, bias, 0)
    function = INT16_BIAS_FUNCTIONS[bias.dtype if bias is not None else "int64"]
    return Lowered("transpose_conv", function, PARAMS, params, scratch)
