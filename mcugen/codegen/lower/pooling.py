"""AVERAGE_POOL_2D and MAX_POOL_2D: int8, int16 and float32 (TFLM pooling_common.cc Prepare)."""

from __future__ import annotations

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, Value, register
from mcugen.codegen.lower._common import (
    activation_params,
    check_dtype,
    check_operands,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.codegen.lower.conv_2d import (
    check_window_arithmetic,
    explicit_padding,
    spatial_window,
    window_overlap,
)
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.rewrite import EXPLICIT_PADDING
from mcugen.model.traits import NO_TRAITS, OpTraits

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "float32")

PARAMS = "mcu_pooling_params_t"
FUNCTIONS = {"AVERAGE_POOL_2D": "mcu_average_pool_2d", "MAX_POOL_2D": "mcu_max_pool_2d"}
SUFFIX = {"int8": "int8", "int16": "int16", "float32": "f32"}


def window_params(op: Operator, x: Tensor, y: Tensor) -> tuple[tuple[str, Value], ...]:
    """Strides, filter size and the padding TFLM's ComputePaddingHeightWidth derives."""
    opts = op.options
    stride = (int(opts.get("stride_h", 0)), int(opts.get("stride_w", 0)))
    filt = (int(opts.get("filter_height", 0)), int(opts.get("filter_width", 0)))
    padding = int(opts.get("padding", 0))
    if min(stride) < 1 or min(filt) < 1:
        raise unsupported(op, f"strides {stride} and filter {filt} must be positive")
    if padding not in (0, 1):
        raise unsupported(op, f"padding {padding} is neither SAME nor VALID")
    in_hw = (x.shape[1], x.shape[2])
    if EXPLICIT_PADDING in opts:  # a tile of a patch stage (mcugen/model/patch_rewrite.py)
        pad_h, pad_w = explicit_padding(op, in_hw, filt, stride, (1, 1), (y.shape[1], y.shape[2]))
        out_hw: tuple[int, ...] = (y.shape[1], y.shape[2])
    else:
        out_hw = tuple(quant.out_size(padding, in_hw[i], filt[i], stride[i]) for i in range(2))
        pad_h, pad_w = quant.conv_padding(padding, stride, (1, 1), in_hw, filt)
    if min(out_hw) < 1 or out_hw != (y.shape[1], y.shape[2]):
        raise unsupported(op, f"output size {y.shape[1:3]} does not match the computed {out_hw}")
    for i, pad in enumerate((pad_h, pad_w)):
        check_window_arithmetic(op, in_hw[i], filt[i], stride[i], 1, out_hw[i], pad)
    return (
        ("stride_w", stride[1]),
        ("stride_h", stride[0]),
        ("filter_w", filt[1]),
        ("filter_h", filt[0]),
        ("pad_w", pad_w),
        ("pad_h", pad_h),
    )


def _check_quantization(op: Operator, x: Tensor, y: Tensor) -> None:
    """TFLM requires identical input and output quantization (scale within 1e-6)."""
    qx, qy = qparams(op, x), qparams(op, y)
    scale_diff = float(abs(np.float32(qx.scale) - np.float32(qy.scale)))
    if scale_diff > 1.0e-6 or qx.zero_point != qy.zero_point:
        raise unsupported(op, "input and output quantization must be identical")


def _check_sum(op: Operator, x: Tensor) -> None:
    """The int32 sum of a window (its in-range taps at the type's largest magnitude, plus half
    the count for the rounding) must not overflow, as it would in TFLM's kernel."""
    filt = int(op.options.get("filter_height", 0)), int(op.options.get("filter_width", 0))
    taps = min(filt[0], x.shape[1]) * min(filt[1], x.shape[2])
    if taps * (32768 if x.dtype == "int16" else 128) + taps // 2 > 2**31 - 1:
        raise unsupported(op, f"a window of {taps} {x.dtype} values overflows the int32 sum")


def pool_traits(graph: Graph, op: Operator) -> OpTraits:
    """Pooling is spatially local (`Window`, patch stages) and may write at a distance before
    its input (reference/pooling.c runs output pixels in row-major order). Never raises."""
    filt = (int(op.options.get("filter_height", 0)), int(op.options.get("filter_width", 0)))
    window = spatial_window(graph, op, filt, (1, 1), 0)
    if window is None:
        return NO_TRAITS
    return OpTraits(window=window, input_after=window_overlap(graph, op, window))


@register("AVERAGE_POOL_2D", "MAX_POOL_2D", traits=pool_traits, types=TYPES)
def lower_pool_2d(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (1,))
    x, y = req(graph, op, 0), out(graph, op)
    dtype = check_dtype(op, x, *TYPES)
    check_dtype(op, y, dtype)
    if len(x.shape) != 4 or len(y.shape) != 4:
        raise unsupported(op, "input and output must be 4D (NHWC)")
    if x.shape[0] != y.shape[0] or x.shape[3] != y.shape[3]:
        raise unsupported(op, f"batch and depth of {x.shape} and {y.shape} differ")
    if dtype != "float32":
        _check_quantization(op, x, y)
    params = window_params(op, x, y) + activation_params(op, y)
    if op.opcode == "AVERAGE_POOL_2D" and dtype != "float32":
        _check_sum(op, x)
    function = f"{FUNCTIONS[op.opcode]}_{SUFFIX[dtype]}"
    return Lowered("pooling", function, PARAMS, params, pixels_in_order=True)
