"""CONV_2D: int8 (per-channel or per-tensor weights, int32 bias), int16 x int8 (int64 or int32
bias) and float32, grouped or not.

Also holds the pieces DEPTHWISE_CONV_2D and TRANSPOSE_CONV share: geometry options (strides,
dilations, padding) and the per-channel requantization that TFLM's
PopulateConvolutionQuantizationParams computes.
"""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Array, Lowered, Params, fields, member, register
from mcugen.codegen.lower._common import (
    REQUANT,
    WINDOW_PARAMS,
    activation_params,
    check_accumulator,
    check_dtype,
    check_int16_zero_points,
    check_int64_accumulator,
    check_int64_shifts,
    inp,
    int16_accumulator,
    invalid,
    out,
    qparams,
    req,
    rescale_multipliers,
    unsupported,
)
from mcugen.model.ir import Graph, Operator, Tensor, element_size
from mcugen.model.overlap import overlap_distance
from mcugen.model.rewrite import EXPLICIT_PADDING
from mcugen.model.traits import NO_TRAITS, OpTraits, Window

PARAMS = "mcu_conv_2d_params_t"
SAME_PADDING, VALID_PADDING = 0, 1
INT32_MAX = 2**31 - 1

#: The element types of CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV activations (declared
#: with their registrations; int16 is the 16x8 path).
CONV_TYPES = ("int8", "int16", "float32")


def check_4d(op: Operator, *tensors: Tensor) -> None:
    """TFLM's conv kernels index every tensor as NHWC / OHWI."""
    for t in tensors:
        if len(t.shape) != 4:
            raise unsupported(op, f"tensor {t.index} has shape {t.shape}; expected 4 dimensions")


def check_input_count(op: Operator, required: int) -> None:
    """`required` inputs plus one optional bias (which may be -1), one output."""
    if len(op.inputs) not in (required, required + 1) or len(op.outputs) != 1:
        raise unsupported(op, f"expected {required} or {required + 1} inputs and 1 output")


def positive_option(op: Operator, name: str) -> int:
    value = int(op.options.get(name, 1))
    if value < 1:
        raise unsupported(op, f"{name} = {value}; must be at least 1")
    return value


def padding_option(op: Operator) -> int:
    padding = int(op.options.get("padding", 0))
    if padding not in (0, 1):
        raise unsupported(op, f"padding {padding} is neither SAME nor VALID")
    return padding


def explicit_padding(
    op: Operator,
    in_hw: tuple[int, int],
    filt_hw: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    out_hw: tuple[int, int],
) -> tuple[int, int]:
    """(top, left) of a padding fused in by `mcugen.model.rewrite` (option `EXPLICIT_PADDING`).

    The kernels skip taps outside the input, which equals padding with the input zero point (int8)
    or 0.0 (float32); the bottom/right padding only has to agree with the output shape.
    """
    top, left, bottom, right = (int(v) for v in op.options[EXPLICIT_PADDING])
    for i, (before, after) in enumerate(((top, bottom), (left, right))):
        span = in_hw[i] + before + after - ((filt_hw[i] - 1) * dilation[i] + 1)
        if before < 0 or after < 0 or span < 0 or span // stride[i] + 1 != out_hw[i]:
            raise unsupported(
                op, f"explicit padding {(top, left, bottom, right)} does not give output {out_hw}"
            )
    return top, left


def check_window_arithmetic(
    op: Operator, size: int, filt: int, stride: int, dilation: int, steps: int, pad: int
) -> None:
    """The window coordinates the kernels compute in int32 along one axis (step x stride - pad +
    tap x dilation, for `steps` window positions over an input of `size` with `pad` before it)
    stay below 2^31, as every TFLM kernel assumes."""
    if steps * stride + filt * dilation + size + 2 * pad > INT32_MAX:
        raise invalid(
            op,
            f"stride {stride}, dilation {dilation} and filter {filt} over {size} positions "
            "overflow the kernel's 32-bit window arithmetic",
        )


def check_output_size(
    op: Operator,
    padding: int,
    in_hw: tuple[int, int],
    filt_hw: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    out_hw: tuple[int, int],
) -> None:
    """The output's height and width are ComputeOutSize's, as TFLite sizes them."""
    want = tuple(
        quant.out_size(padding, in_hw[i], filt_hw[i], stride[i], dilation[i]) for i in (0, 1)
    )
    if want != out_hw:
        raise invalid(op, f"output height and width {out_hw} are not the computed {want}")


def window_params(
    op: Operator,
    in_hw: tuple[int, int],
    filt_hw: tuple[int, int],
    dilated: bool = True,
    out_hw: tuple[int, int] | None = None,
) -> Params:
    """Strides, dilations and ComputePaddingHeightWidth's (pad_h, pad_w) for the kernels, or the
    (top, left) of an explicit padding when the operator carries one (then `out_hw` is required).
    Without an options table TFLM reads zero strides, so one is required."""
    if not op.options:
        raise invalid(op, "has no options table (strides, padding)")
    stride = positive_option(op, "stride_h"), positive_option(op, "stride_w")
    dilation = (1, 1)
    if dilated:
        dilation = (
            positive_option(op, "dilation_h_factor"),
            positive_option(op, "dilation_w_factor"),
        )
    if EXPLICIT_PADDING in op.options and out_hw is not None:
        pad_h, pad_w = explicit_padding(op, in_hw, filt_hw, stride, dilation, out_hw)
    else:
        padding = padding_option(op)
        if out_hw is not None:
            check_output_size(op, padding, in_hw, filt_hw, stride, dilation, out_hw)
        pad_h, pad_w = quant.conv_padding(padding, stride, dilation, in_hw, filt_hw)
    steps = out_hw or in_hw
    for i, pad in enumerate((pad_h, pad_w)):
        check_window_arithmetic(op, in_hw[i], filt_hw[i], stride[i], dilation[i], steps[i], pad)
    return (
        ("stride_w", stride[1]),
        ("stride_h", stride[0]),
        ("dilation_w", dilation[1]),
        ("dilation_h", dilation[0]),
        ("pad_w", pad_w),
        ("pad_h", pad_h),
    )


def check_types(
    op: Operator, x: Tensor, w: Tensor, y: Tensor, bias: Tensor | None, *, int16: bool = False
) -> str:
    """int8 activations with int8 weights and int32 bias, float32 throughout, or (kernels with a
    16x8 path, `int16`) int16 activations with zero point 0, int8 weights, int64 or int32 bias."""
    dtype = check_dtype(op, x, *(CONV_TYPES if int16 else ("int8", "float32")))
    if dtype == "float32" and w.dtype != "float32":
        what = f"hybrid model ({w.dtype} weights, float32 activations)"
        raise unsupported(op, f"{what} is not supported (nor by TFLM); use int8 activations")
    check_dtype(op, w, "int8" if dtype == "int16" else dtype)
    check_dtype(op, y, dtype)
    if dtype == "int16":
        check_int16_zero_points(op, x, y)
        int16_accumulator(op, bias)
    elif bias is not None:
        check_dtype(op, bias, "int32" if dtype == "int8" else "float32")
    return dtype


def window_operands(
    graph: Graph, op: Operator
) -> tuple[Tensor, Tensor, Tensor, Tensor | None, str]:
    """CONV_2D's and DEPTHWISE_CONV_2D's input, filter, output and optional bias, and their
    element type (`check_types`, with the 16x8 path)."""
    check_input_count(op, 2)
    x, w, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    bias = inp(graph, op, 2)
    return x, w, y, bias, check_types(op, x, w, y, bias, int16=True)


def kernel_function(
    op: Operator,
    kernel: str,
    dtype: str,
    w: Tensor,
    bias: Tensor | None,
    channel_axis: int,
    params: Params,
) -> str:
    """mcu_<kernel>_int8 / _f32, and for 16x8 the accumulator TFLM picks from the bias type:
    mcu_<kernel>_int16 (int64, its sums bounded by `check_int64_accumulator`) or
    mcu_<kernel>_int16_acc32."""
    if dtype != "int16":
        return f"mcu_{kernel}_{'f32' if dtype == 'float32' else dtype}"
    if int16_accumulator(op, bias) == "int32":
        return f"mcu_{kernel}_int16_acc32"
    shifts = fields(params)["shifts"]
    assert isinstance(shifts, Array)
    check_int64_shifts(op, shifts)
    check_int64_accumulator(op, w, bias, channel_axis)
    return f"mcu_{kernel}_int16"


def requant_params(
    op: Operator, x: Tensor, w: Tensor, y: Tensor, channel_axis: int, bias: Tensor | None = None
) -> Params:
    """Offsets and per-channel (multiplier, shift) as PopulateConvolutionQuantizationParams.

    Each channel's rescale is double(input_scale) * double(filter_scale[c]) / double(output_scale).
    The filter zero point is ignored, as TFLM's int8 reference kernels ignore it. The accumulator
    must not overflow (`check_accumulator`).
    """
    qx, qw, qy = qparams(op, x), qparams(op, w), qparams(op, y)
    channels = w.shape[channel_axis]
    if qw.per_channel and (len(qw.scales) != channels or qw.axis % 4 != channel_axis):
        raise unsupported(
            op,
            f"filter has {len(qw.scales)} scales on axis {qw.axis}; expected "
            f"1 or {channels} on axis {channel_axis}",
        )
    if len(qw.zero_points) != len(qw.scales):
        raise unsupported(op, "filter quantization has mismatched scale and zero-point counts")
    mults, shifts = rescale_multipliers(qx.scale, qw.scales, qy.scale)
    if x.dtype == "int8":
        check_accumulator(op, x, w, bias, channel_axis, tuple(int(s) for s in shifts.values))
    return (
        ("input_offset", -qx.zero_point),
        ("output_offset", qy.zero_point),
        ("num_channels", len(qw.scales)),
        ("multipliers", mults),
        ("shifts", shifts),
    )


def type_params(
    op: Operator, x: Tensor, w: Tensor, y: Tensor, channel_axis: int, bias: Tensor | None = None
) -> Params:
    """Activation clamp plus, for int8, the requantization parameters: the member REQUANT."""
    act = activation_params(op, y)
    if y.dtype == "float32":
        return member(REQUANT, act)
    return member(REQUANT, requant_params(op, x, w, y, channel_axis, bias) + act)


def check_channels(op: Operator, name: str, got: int, want: int) -> None:
    if got != want:
        raise unsupported(op, f"{name} is {got}; expected {want}")


def check_bias(op: Operator, bias: Tensor | None, channels: int) -> None:
    if bias is not None and bias.num_elements != channels:
        raise unsupported(op, f"bias has {bias.num_elements} elements; expected {channels}")


def conv_staging_bytes(graph: Graph, op: Operator) -> int | None:
    """Scratch bytes the kernel needs to run `op` with its output over its input, or None when it
    cannot: int8 or float32, 4D, batch 1, and
    - DEPTHWISE_CONV_2D with depth multiplier 1 and no more output than input pixels: it copies one
      input channel plane at a time into the scratch and writes that channel's outputs, which land
      on that channel's own input positions (output pixel k sits where input pixel k was);
    - CONV_2D 1x1 stride 1 over the same grid: it copies one input pixel at a time and writes that
      pixel's outputs, first pixel first when it has no more output than input channels, last
      pixel first when it has more (runtime_c/kernels/reference/conv_2d.c, depthwise_conv_2d.c);
      int8 stages two pixels, which the optimised kernel (kernels/opt/conv_2d_1x1_s8.c) runs as
      one 2-row block (the reference kernel uses the first).
    Arithmetic and order of the sums are unchanged, so outputs stay bit-exact. Never raises."""
    if len(op.inputs) < 2 or len(op.outputs) != 1 or min(*op.inputs[:2], op.outputs[0]) < 0:
        return None
    x, w, y = (graph.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if x.dtype != y.dtype or x.dtype not in ("int8", "float32") or w.data is None:
        return None
    if len(x.shape) != 4 or len(y.shape) != 4 or len(w.shape) != 4 or x.shape[0] != 1:
        return None
    size = element_size(x.dtype)
    if op.opcode == "DEPTHWISE_CONV_2D":
        if y.shape[3] != x.shape[3] or y.shape[1] * y.shape[2] > x.shape[1] * x.shape[2]:
            return None
        return x.shape[1] * x.shape[2] * size
    pointwise = w.shape[1] == w.shape[2] == 1 and w.shape[3] == x.shape[3]
    same_grid = y.shape[1:3] == x.shape[1:3]
    strides = (int(op.options.get("stride_h", 1)), int(op.options.get("stride_w", 1)))
    if not pointwise or not same_grid or strides != (1, 1):
        return None
    return x.shape[3] * size * (2 if x.dtype == "int8" else 1)


def spatial_window(
    graph: Graph, op: Operator, kernel: tuple[int, int], dilation: tuple[int, int], macs: int
) -> Window | None:
    """The `Window` of a windowed operator over a batch-1 NHWC input 0 whose other inputs are
    constant (patch stages), from its options: SAME/VALID's ComputePaddingHeightWidth or an
    explicit padding. None when it is not that, or its options do not make sense. Never raises."""
    if not op.inputs or len(op.outputs) != 1 or min(op.inputs[0], op.outputs[0]) < 0:
        return None
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    others = [graph.tensors[t] for t in op.inputs[1:] if t >= 0]
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != 1 or y.shape[0] != 1:
        return None
    if not all(t.is_constant for t in others) or x.is_constant:
        return None
    stride = (int(op.options.get("stride_h", 0)), int(op.options.get("stride_w", 0)))
    if min(*stride, *kernel, *dilation) < 1:
        return None
    if EXPLICIT_PADDING in op.options:
        pad = tuple(int(v) for v in op.options[EXPLICIT_PADDING])[:2]
    else:
        padding = int(op.options.get("padding", -1))
        if padding not in (SAME_PADDING, VALID_PADDING):
            return None
        pad = quant.conv_padding(padding, stride, dilation, x.shape[1:3], kernel)
    return Window(kernel, stride, dilation, (pad[0], pad[1]), macs)


def window_overlap(graph: Graph, op: Operator, window: Window | None) -> int | None:
    """`OpTraits.input_after` of a windowed operator whose reference kernel (and every variant
    that keeps the registered traits) computes output pixels in row-major order, each written
    after its window is read (reference/conv_2d.c, depthwise_conv_2d.c, pooling.c; the im2col
    variants gather a pair or strip of windows first; mcugen/model/overlap.py): None without a
    window or for elements of different sizes. Never raises."""
    if window is None:
        return None
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if element_size(x.dtype) != element_size(y.dtype):
        return None
    in_hwc = (x.shape[1], x.shape[2], x.shape[3])
    out_hwc = (y.shape[1], y.shape[2], y.shape[3])
    return overlap_distance(window, in_hwc, out_hwc, element_size(x.dtype))


def conv_traits(graph: Graph, op: Operator) -> OpTraits:
    """CONV_2D and DEPTHWISE_CONV_2D may write over their input with a staging scratch or at a
    distance before it (`window_overlap`), and are spatially local (`Window`). Never raises."""
    staging = conv_staging_bytes(graph, op)
    window = None
    if len(op.inputs) >= 2 and op.inputs[1] >= 0 and len(graph.tensors[op.inputs[1]].shape) == 4:
        w = graph.tensors[op.inputs[1]].shape
        dilation = (
            int(op.options.get("dilation_h_factor", 1)),
            int(op.options.get("dilation_w_factor", 1)),
        )
        taps = w[1] * w[2] * (w[3] if op.opcode == "CONV_2D" else 1)
        window = spatial_window(graph, op, (w[1], w[2]), dilation, taps)
    if staging is None and window is None:
        return NO_TRAITS
    return OpTraits(
        staging_bytes=staging, window=window, input_after=window_overlap(graph, op, window)
    )


@register("CONV_2D", traits=conv_traits, types=CONV_TYPES)
def lower_conv_2d(graph: Graph, op: Operator) -> Lowered:
    x, w, y, bias, dtype = window_operands(graph, op)
    check_4d(op, x, w, y)
    in_c, (out_c, k_h, k_w, k_c) = x.shape[3], w.shape
    if k_c < 1 or in_c < k_c or in_c % k_c != 0 or out_c % (in_c // k_c) != 0:
        raise unsupported(
            op,
            f"filter depth {k_c} does not split {in_c} input channels into "
            f"groups that divide {out_c} output channels",
        )
    check_channels(op, "output depth", y.shape[3], out_c)
    check_channels(op, "output batch", y.shape[0], x.shape[0])
    check_bias(op, bias, out_c)
    in_hw, out_hw = (x.shape[1], x.shape[2]), (y.shape[1], y.shape[2])
    window = member(WINDOW_PARAMS, window_params(op, in_hw, (k_h, k_w), out_hw=out_hw))
    params = window + type_params(op, x, w, y, 0, bias)
    function = kernel_function(op, "conv_2d", dtype, w, bias, 0, params)
    # the int8 kernel writes a concatenation's channel slice at its node's output stride
    return Lowered(
        "conv_2d",
        function,
        PARAMS,
        params,
        output_stride=function == "mcu_conv_2d_int8",
        pixels_in_order=True,
    )
