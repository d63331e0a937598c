"""The QDQ nodes themselves and the operators without a window: element-wise, Concat, Reshape,
Flatten, Softmax, Sigmoid, standalone Relu/Clip."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from mcugen.model.onnx_import.context import (
    ACT_NONE,
    ACT_RELU,
    ACT_RELU6,
    NHWC_AXIS,
    TO_NHWC,
    Context,
    QConst,
    Quant,
    Value,
    attributes,
)

#: TFLM's int8 SOFTMAX and LOGISTIC write this quantization.
PROBABILITY = Quant(float(np.float32(1.0) / np.float32(256)), -128)


def constant(ctx: Context, node: onnx.NodeProto) -> None:
    a = {x.name: x for x in node.attribute}
    if "value" not in a:
        raise ctx.refuse("only Constant with a tensor `value` is supported", node)
    ctx.consts[node.output[0]] = numpy_helper.to_array(a["value"].t)


def dequantize(ctx: Context, node: onnx.NodeProto) -> None:
    x = node.input[0]
    if x in ctx.consts:
        ctx.qconsts[node.output[0]] = _quantized_constant(ctx, node)
        return
    quant = ctx.quant_of(node)
    if x not in ctx.values:
        raise ctx.refuse(f"input {x!r} is not a quantized activation", node)
    v = ctx.values[x]
    if v.quant != quant:
        raise ctx.refuse("DequantizeLinear with other parameters than its QuantizeLinear", node)
    ctx.values[node.output[0]] = v


def _quantized_constant(ctx: Context, node: onnx.NodeProto) -> QConst:
    """A DequantizeLinear of a constant, checked: integer data, finite scales, one scale and
    zero point per tensor or per slice along `axis`."""
    scale = np.asarray(ctx.const(node.input[1], node), np.float32).reshape(-1)
    zp_name = node.input[2] if len(node.input) > 2 else ""
    zp = np.asarray(ctx.const(zp_name, node) if zp_name else np.zeros(1, np.int8)).reshape(-1)
    data = np.asarray(ctx.consts[node.input[0]])
    axis = int(attributes(node).get("axis", 1)) if scale.size > 1 else 0
    if scale.size > 1 and not -data.ndim <= axis < data.ndim:
        raise ctx.fail(f"axis {axis} out of range for a constant of shape {data.shape}", node)
    axis %= max(data.ndim, 1)
    channels = data.shape[axis] if data.ndim else 1
    if scale.size not in (1, channels) or zp.size != scale.size:
        raise ctx.fail(
            f"{scale.size} scales and {zp.size} zero points for a constant of shape "
            f"{data.shape} (axis {axis})",
            node,
        )
    if not np.issubdtype(data.dtype, np.integer) or not np.all(np.isfinite(scale)):
        raise ctx.fail(
            f"a {data.dtype} constant with scales {scale[:4]}... cannot be dequantized", node
        )
    return QConst(data, scale, zp, axis)


def quantize(ctx: Context, node: onnx.NodeProto) -> None:
    """A QuantizeLinear not folded into its producer: of a DequantizeLinear (a requantisation)
    or of a graph input (made in `graph_inputs`)."""
    x = node.input[0]
    if x not in ctx.values:
        raise ctx.refuse(f"input {x!r} comes from an operator mcugen cannot quantize", node)
    ctx.values[node.output[0]] = ctx.requantized(ctx.values[x], ctx.quant_of(node))


def identity(ctx: Context, node: onnx.NodeProto) -> None:
    ctx.values[node.output[0]] = ctx.stored(node.input[0], node)


def _broadcast_const(ctx: Context, q: QConst, like: Value, node: onnx.NodeProto) -> Value:
    """A quantized constant operand in the IR layout of the activation it meets."""
    if q.scales.size != 1:
        raise ctx.refuse("per-channel constant operands are not supported", node)
    data = q.data.astype(np.int16) - (128 if q.data.dtype == np.uint8 else 0)
    zp = int(q.zero_points[0]) - (128 if q.data.dtype == np.uint8 else 0)
    if q.data.dtype not in (np.int8, np.uint8):
        raise ctx.refuse(f"constant operand of type {q.data.dtype} is not supported", node)
    if data.ndim > len(like.shape):
        raise ctx.refuse(
            f"constant operand {data.shape} has more dimensions than {like.shape}", node
        )
    data = data.reshape((1,) * (len(like.shape) - data.ndim) + data.shape)
    shape = data.shape
    if like.nhwc:
        data = data.transpose(TO_NHWC)
    quant = Quant(float(q.scales[0]), zp)
    t = ctx.b.const(data.astype(np.int8), scale=quant.scale, zero_point=zp)
    return Value(t, shape, quant, nhwc=like.nhwc)


def binary(ctx: Context, node: onnx.NodeProto) -> None:
    """Add and Mul, with numpy broadcasting (a constant operand re-laid out as its partner)."""
    names = node.input[:2]
    acts = [ctx.value(n, node) for n in names if n in ctx.values]
    if not acts:
        raise ctx.refuse("at least one operand must be an activation", node)
    ops = [
        ctx.values[n]
        if n in ctx.values
        else _broadcast_const(ctx, ctx.qconst(n, node), acts[0], node)
        for n in names
    ]
    if any(len(o.shape) != len(acts[0].shape) or o.nhwc != acts[0].nhwc for o in ops):
        raise ctx.refuse("operands of different ranks or layouts are not supported", node)
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(*(o.shape for o in ops)))
    except ValueError:
        raise ctx.fail(f"shapes {[o.shape for o in ops]} do not broadcast", node) from None
    spec = ctx.output_spec(node)
    v = ctx.result(spec, shape, nhwc=acts[0].nhwc)
    opcode = "ADD" if node.op_type == "Add" else "MUL"
    ctx.b.op(opcode, [o.index for o in ops], [v.index], fused_activation_function=spec.act)


def concat(ctx: Context, node: onnx.NodeProto) -> None:
    """Concat; inputs quantized otherwise than the output are requantized first (TFLM's
    CONCATENATION copies bytes)."""
    xs = [ctx.value(n, node) for n in node.input]
    rank = len(xs[0].shape)
    axis = int(attributes(node).get("axis", 1)) % rank
    if any(len(x.shape) != rank or x.nhwc != xs[0].nhwc for x in xs):
        raise ctx.refuse("inputs of different ranks or layouts are not supported", node)
    spec = ctx.output_spec(node)
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    y = ctx.result(spec, tuple(shape), nhwc=xs[0].nhwc)
    ir_axis = NHWC_AXIS[axis] if xs[0].nhwc else axis
    inputs = [ctx.requantized(x, spec.quant).index for x in xs]
    ctx.b.op("CONCATENATION", inputs, [y.index], axis=ir_axis, fused_activation_function=spec.act)


def _onnx_shape(ctx: Context, node: onnx.NodeProto, x: Value) -> tuple[int, ...]:
    if node.op_type == "Flatten":
        axis = int(attributes(node).get("axis", 1)) % (len(x.shape) + 1)
        return (int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:])))
    target = [int(d) for d in np.asarray(ctx.const(node.input[1], node)).reshape(-1)]
    if attributes(node).get("allowzero", 0) and 0 in target:  # PyTorch's view: no 0 in it
        raise ctx.refuse(
            "allowzero=1 with a 0 in the shape (an empty tensor) is not supported", node
        )
    target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    total = int(np.prod(x.shape))
    if target.count(-1) == 1:
        rest = int(np.prod([d for d in target if d != -1]))
        target[target.index(-1)] = total // rest if rest else 0
    if any(d < 0 for d in target) or int(np.prod(target)) != total:
        raise ctx.fail(f"cannot reshape {x.shape} to {target}", node)
    return tuple(target)


def _ordered(shape: tuple[int, ...]) -> bool:
    """A rank-4 NCHW shape whose NHWC storage has the same element order (C or H*W is 1)."""
    return len(shape) != 4 or shape[1] == 1 or shape[2] * shape[3] == 1


def reshape(ctx: Context, node: onnx.NodeProto) -> None:
    """Reshape and Flatten. A map flattened to a matrix keeps its HWC order (see Context)."""
    x = ctx.stored(node.input[0], node)
    shape = _onnx_shape(ctx, node, x)
    spec = ctx.output_spec(node)
    if spec.act != ACT_NONE or (len(shape) == 4 and not _ordered(shape)):
        raise ctx.refuse(
            f"a reshape into {shape} (an NCHW map, or with a Relu) is not supported", node
        )
    if x.nhwc and not _ordered(x.shape) and len(shape) == 2 and shape[0] == x.shape[0]:
        src = ctx.requantized(x, spec.quant)
        chw = (x.shape[1], x.shape[2], x.shape[3])
        y = Value(-1, shape, spec.quant, chw=chw, source=src.index)
        for name in spec.names:
            ctx.values[name] = y
        return
    if x.chw is not None:
        x = ctx.value(node.input[0], node)
    elif x.nhwc and not _ordered(x.shape):
        x = _to_nchw(ctx, x)
    y = Value(-1, shape, x.quant, nhwc=len(shape) == 4)
    t = ctx.tensor(y.ir_shape, x.quant)
    ctx.b.op("RESHAPE", [x.index, ctx.int32(y.ir_shape)], [t], new_shape=y.ir_shape)
    y = Value(t, y.shape, y.quant, y.nhwc)
    ctx.settle(y, spec, node)


def _to_nchw(ctx: Context, x: Value) -> Value:
    t = ctx.tensor(x.shape, x.quant)
    ctx.b.op("TRANSPOSE", [x.index, ctx.int32((0, 3, 1, 2))], [t])
    return Value(t, x.shape, x.quant)


def softmax(ctx: Context, node: onnx.NodeProto) -> None:
    """Softmax on the last IR axis; Sigmoid. TFLM writes scale 1/256, zero point -128: another
    output quantization costs a requantisation after (with onnxruntime's numerics the kernels
    write the output's own)."""
    x = ctx.value(node.input[0], node)
    if node.op_type == "Softmax":
        # before opset 13, Softmax normalises over all the axes from `axis` on, flattened
        flat = ctx.opset < 13
        rank = len(x.shape)
        axis = int(attributes(node).get("axis", 1 if flat else -1)) % rank
        axes = range(axis, rank) if flat else [axis]
        last = 1 if x.nhwc else rank - 1  # the ONNX axis stored last
        if last not in axes or any(x.shape[a] != 1 for a in axes if a != last):
            raise ctx.refuse(
                f"softmax over axis {axis} of {x.shape} (only over the channel axis)", node
            )
    spec = ctx.output_spec(node)
    out = spec.quant if ctx.ort else PROBABILITY  # onnxruntime's kernels quantize directly
    t = Value(ctx.tensor(x.ir_shape, out), x.shape, out, x.nhwc)
    opcode = "SOFTMAX" if node.op_type == "Softmax" else "LOGISTIC"
    if opcode == "SOFTMAX":
        ctx.b.op(opcode, [x.index], [t.index], beta=1.0)
    else:
        ctx.b.op(opcode, [x.index], [t.index])
    ctx.settle(t, spec, node)


def relu(ctx: Context, node: onnx.NodeProto) -> None:
    """A Relu/Clip between quantized activations that no producer could take as its fused
    activation (its input has other readers): RELU (which requantizes), or RELU6 (which keeps
    its input's quantization: a QUANTIZE after it when the output's differs)."""
    x = ctx.value(node.input[0], node)
    spec = ctx.output_spec(node)
    act = ctx.activation_of(node, spec.quant)
    if spec.act != ACT_NONE:
        raise ctx.refuse("two activations in a row are not supported", node)
    if act == ACT_RELU:
        y = ctx.result(spec, x.shape, nhwc=x.nhwc)
        ctx.b.op("RELU", [x.index], [y.index])
        return
    if act == ACT_RELU6:
        t = Value(ctx.tensor(x.ir_shape, x.quant), x.shape, x.quant, x.nhwc)
        ctx.b.op("RELU6", [x.index], [t.index])
        x = t
    elif act != ACT_NONE:
        raise ctx.refuse("a standalone Clip(-1, 1) is not supported", node)
    ctx.settle(x, spec, node)
