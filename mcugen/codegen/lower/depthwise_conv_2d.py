"""DEPTHWISE_CONV_2D: int8 (per-channel or per-tensor weights, int32 bias), int16 x int8 (int64
bias: TFLM reads a 16x8 depthwise bias as int64 only) and float32."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, member, register
from mcugen.codegen.lower._common import WINDOW_PARAMS, unsupported
from mcugen.codegen.lower.conv_2d import (
    CONV_TYPES,
    check_4d,
    check_bias,
    check_channels,
    conv_traits,
    kernel_function,
    type_params,
    window_operands,
    window_params,
)
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_depthwise_conv_2d_params_t"


def depth_multiplier(op: Operator, in_c: int, out_c: int) -> int:
    """The option TFLM's kernel loops over; it must agree with the tensor shapes.

    TFLM only checks this with a debug assertion, so a mismatch reads out of bounds there.
    """
    mult = int(op.options.get("depth_multiplier", 1))
    if mult < 1 or in_c * mult != out_c:
        raise unsupported(
            op,
            f"depth_multiplier {mult} does not map {in_c} input channels "
            f"to {out_c} output channels",
        )
    return mult


@register("DEPTHWISE_CONV_2D", traits=conv_traits, types=CONV_TYPES)
def lower_depthwise_conv_2d(graph: Graph, op: Operator) -> Lowered:
    x, w, y, bias, dtype = window_operands(graph, op)
    if dtype == "int16" and bias is not None and bias.dtype != "int64":
        raise unsupported(op, f"int16 with a {bias.dtype} bias (TFLM reads it as int64)")
    check_4d(op, x, w, y)
    one, k_h, k_w, out_c = w.shape
    check_channels(op, "filter dimension 0", one, 1)
    check_channels(op, "output depth", y.shape[3], out_c)
    check_channels(op, "output batch", y.shape[0], x.shape[0])
    check_bias(op, bias, out_c)
    mult = depth_multiplier(op, x.shape[3], out_c)
    in_hw, out_hw = (x.shape[1], x.shape[2]), (y.shape[1], y.shape[2])
    window = window_params(op, in_hw, (k_h, k_w), out_hw=out_hw)
    params = (
        member(WINDOW_PARAMS, window)
        + (("depth_multiplier", mult),)
        + type_params(op, x, w, y, 3, bias)
    )
    function = kernel_function(op, "depthwise_conv_2d", dtype, w, bias, 3, params)
    return Lowered("depthwise_conv_2d", function, PARAMS, params, pixels_in_order=True)
