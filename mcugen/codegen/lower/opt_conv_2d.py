"""The optimised general int8 CONV_2D (runtime_c/kernels/opt/conv_2d_s8.c): any filter, stride,
dilation and padding, one group; 1x1 stride-1 convolutions stay with conv_2d_1x1_s8.

The kernel gathers the windows of two output pixels into its scratch (im2col), taps outside the
image written as the input zero point, and multiplies them by the filter rows with the int8
matrix product. Padded taps then hold zero point + input offset = 0, as the reference kernel's
skipped taps contribute nothing, so folding input_offset * (the whole filter row) into the bias
(`folded_bias`) is exact for every window, edge ones included. The scratch is two windows
(the second word-aligned), or none when every window is contiguous and inside the image (1x1
with a stride and no padding), which the kernel then reads in place.

Importing opt_mat_mult first registers its variants first, so conv_2d_1x1_s8 is tried before
this one (the first variant that accepts an operator wins).
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, Value
from mcugen.codegen.lower._variants import variant
from mcugen.codegen.lower.opt_mat_mult import mat_mult_params, relaid_weights
from mcugen.model.ir import Graph, Operator

NAME = "conv_2d_s8"
PARAMS = "mcu_conv_2d_s8_params_t"
WINDOW = ("stride_w", "stride_h", "dilation_w", "dilation_h", "pad_w", "pad_h")


def _align4(n: int) -> int:
    return (n + 3) & ~3


def _int(ref: dict[str, Value], key: str) -> int:
    value = ref[key]
    assert isinstance(value, int), (key, value)
    return value


def reads_in_place(graph: Graph, op: Operator, ref: dict[str, Value]) -> bool:
    """Every window is one contiguous run inside the image (the kernel's `window` reads it where
    it is): a filter of one row of dilation-1 taps (or one tap), no padding, and the last window
    inside the image."""
    x, w, y = (graph.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    (_, in_h, in_w, _), (_, k_h, k_w, _), (_, out_h, out_w, _) = x.shape, w.shape, y.shape
    if k_h != 1 or (k_w != 1 and ref["dilation_w"] != 1) or ref["pad_h"] != 0 or ref["pad_w"] != 0:
        return False
    last_x = (out_w - 1) * _int(ref, "stride_w") + (k_w - 1) * _int(ref, "dilation_w")
    return (out_h - 1) * _int(ref, "stride_h") < in_h and last_x < in_w


def is_pointwise_unit(graph: Graph, op: Operator, ref: dict[str, Value]) -> bool:
    """1x1, stride 1, no padding: conv_2d_1x1_s8's shape (and the reference's in-place one)."""
    w = graph.tensors[op.inputs[1]]
    unit = ref["stride_h"] == ref["stride_w"] == 1 and ref["pad_h"] == ref["pad_w"] == 0
    return w.shape[1] == w.shape[2] == 1 and unit


@variant(
    NAME,
    "CONV_2D",
    handles="int8, one group, any filter, stride, dilation and padding but 1x1 stride 1",
)
def conv_2d_s8(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    if reference.function != "mcu_conv_2d_int8":
        return None
    ref = dict(reference.params)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    pad_value = -_int(ref, "input_offset")
    if w.shape[3] != x.shape[3] or is_pointwise_unit(graph, op, ref) or not -128 <= pad_value < 128:
        return None
    mm = mat_mult_params(graph, op, reference)
    relaid = relaid_weights(graph, op)
    if mm is None or relaid is None:
        return None
    params = tuple((k, ref[k]) for k in WINDOW) + (("pad_value", pad_value),) + mm
    depth = w.shape[1] * w.shape[2] * w.shape[3]
    scratch = 0 if reads_in_place(graph, op, ref) else 2 * _align4(depth)
    return Lowered(
        reference.kernel,
        "mcu_conv_2d_s8_opt",
        PARAMS,
        params,
        scratch,
        variant=NAME,
        sources=("opt/mat_mult_s8.c", f"opt/{NAME}.c"),
        constants=relaid,
    )


@variant(
    "depthwise_as_conv_s8",
    "DEPTHWISE_CONV_2D",
    handles="int8 with one input channel (so a depth multiplier equal to the output depth): the "
    "same sums as a convolution of one input channel, run by conv_2d_s8's kernel",
)
def depthwise_as_conv(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """A depthwise convolution of one input channel: output channel m sums taps of that channel
    with filter[0, ky, kx, m], exactly a CONV_2D whose filter row m is that filter's column m
    (`filter_rows` transposes it; relaid_weights stores it in the pair layout)."""
    if reference.function != "mcu_depthwise_conv_2d_int8":
        return None
    ref = dict(reference.params)
    x = graph.tensors[op.inputs[0]]
    pad_value = -_int(ref, "input_offset")
    w = graph.tensors[op.inputs[1]]
    # one input channel, several outputs (one output: depthwise_conv_2d_s8 takes it)
    if x.shape[3] != 1 or w.shape[3] < 2 or not -128 <= pad_value < 128:
        return None
    mm = mat_mult_params(graph, op, reference)
    relaid = relaid_weights(graph, op)
    if mm is None or relaid is None:
        return None
    params = tuple((k, ref[k]) for k in WINDOW) + (("pad_value", pad_value),) + mm
    scratch = 0 if reads_in_place(graph, op, ref) else 2 * _align4(w.shape[1] * w.shape[2])
    return Lowered(
        "conv_2d",
        "mcu_conv_2d_s8_opt",
        PARAMS,
        params,
        scratch,
        variant="depthwise_as_conv_s8",
        sources=("opt/mat_mult_s8.c", f"opt/{NAME}.c"),
        headers=("mcu/kernels/conv_2d.h",),
        constants=relaid,
    )
