"""Conv, Gemm/MatMul and the pools: weights re-laid out to TFLite's order, ONNX padding to SAME,
VALID or an explicit PAD."""

from __future__ import annotations

import numpy as np
import onnx

from mcugen.model.onnx_import.context import (
    ACT_NONE,
    TO_NHWC,
    Context,
    QConst,
    Value,
    attributes,
)

SAME, VALID = 0, 1


def _window(
    ctx: Context, node: onnx.NodeProto, x: Value, kernel: tuple[int, int]
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, ...]]:
    """(strides, dilations, pads (top, left, bottom, right)) of a 2-D window node."""
    a = attributes(node)
    if len(x.shape) != 4 or not x.nhwc:
        raise ctx.refuse(f"only 2-D windows on NCHW maps are supported (input {x.shape})", node)
    strides = tuple(a.get("strides", (1, 1)))
    dilations = tuple(a.get("dilations", (1, 1)))
    if a.get("ceil_mode", 0):
        raise ctx.refuse("ceil_mode=1 is not supported", node)
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = _same_pads(x.shape[2:], kernel, strides, dilations, upper=auto == "SAME_UPPER")
    elif auto == "VALID":
        pads = (0, 0, 0, 0)
    else:
        pads = tuple(a.get("pads", (0, 0, 0, 0)))
    if len(strides) != 2 or len(dilations) != 2 or len(pads) != 4 or min(*strides, *dilations) < 1:
        raise ctx.fail(f"bad window attributes {strides}, {dilations}, {pads}", node)
    return strides, dilations, pads  # type: ignore[return-value]


def _same_pads(
    hw: tuple[int, ...], k: tuple[int, int], s: tuple[int, ...], d: tuple[int, ...], upper: bool
) -> tuple[int, ...]:
    """TFLite's SAME padding (ComputePaddingHeightWidth): the odd pixel after when `upper`."""
    before, after = [], []
    for i in range(2):
        out = -(-hw[i] // s[i])
        total = max((out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - hw[i], 0)
        small = total // 2
        before.append(small if upper else total - small)
        after.append(total - before[-1])
    return (*before, *after)


def _out_hw(
    ctx: Context,
    node: onnx.NodeProto,
    hw: tuple[int, ...],
    k: tuple[int, int],
    s: tuple[int, ...],
    d: tuple[int, ...],
    pads: tuple[int, ...],
) -> tuple[int, int]:
    """The output's height and width; a window that does not fit is refused."""
    out = tuple(
        (hw[i] + pads[i] + pads[i + 2] - ((k[i] - 1) * d[i] + 1)) // s[i] + 1 for i in range(2)
    )
    if min(out) < 1 or min(*k, *pads) < 0 or min(k) < 1:
        raise ctx.fail(f"window {k} with pads {pads} does not fit the {hw} map", node)
    return out  # type: ignore[return-value]


def _padding(
    ctx: Context,
    x: Value,
    k: tuple[int, int],
    s: tuple[int, ...],
    d: tuple[int, ...],
    pads: tuple[int, ...],
) -> int | None:
    """SAME or VALID when `pads` are TFLite's, else None."""
    if not any(pads):
        return VALID
    if tuple(pads) == _same_pads(x.shape[2:], k, s, d, upper=True):
        return SAME
    return None


def _padded(ctx: Context, x: Value, pads: tuple[int, ...]) -> Value:
    """An explicit PAD with the zero point (a real 0, as ONNX pads a convolution)."""
    n, c, h, w = x.shape
    shape = (n, c, h + pads[0] + pads[2], w + pads[1] + pads[3])
    paddings = ctx.int32([[0, 0], [pads[0], pads[2]], [pads[1], pads[3]], [0, 0]])
    v = Value(ctx.tensor(tuple(shape[a] for a in TO_NHWC), x.quant), shape, x.quant, nhwc=True)
    ctx.b.op("PAD", [x.index, paddings], [v.index])
    return v


def _weight_scales(ctx: Context, node: onnx.NodeProto, w: QConst, axis: int) -> np.ndarray:
    if np.any(w.zero_points != 0):
        raise ctx.refuse(
            "weights with a non-zero zero point are not supported (TFLite's are symmetric)",
            node,
            "quantize with weight_type=QuantType.QInt8",
        )
    if w.data.dtype != np.int8:
        raise ctx.refuse(f"weights of type {w.data.dtype} are not supported (int8 are)", node)
    if w.scales.size > 1 and w.axis != axis:
        raise ctx.refuse(f"per-channel weights on axis {w.axis} (expected {axis})", node)
    return w.scales.astype(np.float32).reshape(-1)


def _bias_values(
    ctx: Context, node: onnx.NodeProto, x: Value, scales: np.ndarray, n: int
) -> np.ndarray:
    """The bias as int32 at scale input * weight, requantized if the file's differs."""
    scale = np.broadcast_to(np.float32(x.quant.scale) * scales.astype(np.float32), (n,))
    if len(node.input) < 3 or not node.input[2]:
        real = np.zeros(n)
    elif node.input[2] in ctx.qconsts:
        real = ctx.qconsts[node.input[2]].real().reshape(-1)
    else:
        real = np.asarray(ctx.const(node.input[2], node), np.float64).reshape(-1)
    if real.size != n:
        raise ctx.fail(f"bias has {real.size} values for {n} outputs", node)
    q = np.round(real / scale.astype(np.float64))
    if not np.all(np.isfinite(q)) or np.any(np.abs(q) > 2**31 - 1):
        raise ctx.fail("bias does not fit int32 at scale input * weight", node)
    return q.astype(np.int32)


def _bias_tensor(ctx: Context, q: np.ndarray, x: Value, scales: np.ndarray) -> int:
    scale = np.broadcast_to(np.float32(x.quant.scale) * scales.astype(np.float32), q.shape)
    return ctx.b.const(q, scale=scale.tolist(), zero_point=0)


def conv(ctx: Context, node: onnx.NodeProto) -> None:
    """Conv: CONV_2D (group 1), DEPTHWISE_CONV_2D (group = channels), or for other groups a
    SPLIT of the channels, one CONV_2D per group and a CONCATENATION (as TFLite converters
    lower a grouped convolution)."""
    x = ctx.value(node.input[0], node)
    w = ctx.qconst(node.input[1], node)
    if w.data.ndim != 4:
        raise ctx.refuse(f"only 2-D convolutions are supported (weight {w.data.shape})", node)
    m, cg, kh, kw = w.data.shape
    group = int(attributes(node).get("group", 1))
    strides, dil, pads = _window(ctx, node, x, (kh, kw))
    c = x.shape[1]
    scales = _weight_scales(ctx, node, w, 0)  # one, or one per output channel
    if group < 1 or c % group or cg != c // group or m % group:
        raise ctx.fail(f"weight {w.data.shape} does not fit group {group} of {c} channels", node)
    padding = _padding(ctx, x, (kh, kw), strides, dil, pads)
    hw = _out_hw(ctx, node, x.shape[2:], (kh, kw), strides, dil, pads)
    if padding is None:
        x, padding = _padded(ctx, x, pads), VALID
    bias = _bias_values(ctx, node, x, scales, m)
    spec = ctx.output_spec(node)
    y = ctx.result(spec, (x.shape[0], m, *hw), nhwc=True)
    window = dict(
        padding=padding,
        stride_w=strides[1],
        stride_h=strides[0],
        dilation_w_factor=dil[1],
        dilation_h_factor=dil[0],
        fused_activation_function=spec.act,
    )
    if group == c and cg == 1 and group > 1:
        wt = ctx.b.const(
            np.ascontiguousarray(w.data.transpose(1, 2, 3, 0)),
            scale=scales.tolist(),
            zero_point=0,
            axis=3,
        )
        ctx.b.op(
            "DEPTHWISE_CONV_2D",
            [x.index, wt, _bias_tensor(ctx, bias, x, scales)],
            [y.index],
            depth_multiplier=m // c,
            **window,
        )
        return
    parts = [x.index]
    if group > 1:
        shape = (x.shape[0], *x.ir_shape[1:3], c // group)
        parts = [ctx.tensor(shape, x.quant) for _ in range(group)]
        ctx.b.op("SPLIT", [ctx.int32(3), x.index], parts, num_splits=group)
    outs = [y.index] if group == 1 else []
    mg = m // group
    for g, part in enumerate(parts):
        sl = slice(g * mg, (g + 1) * mg)
        part_scales = scales if scales.size == 1 else scales[sl]  # per tensor: one for all
        wt = ctx.b.const(
            np.ascontiguousarray(w.data[sl].transpose(0, 2, 3, 1)),
            scale=part_scales.tolist(),
            zero_point=0,
            axis=0,
        )
        if group > 1:
            outs.append(ctx.tensor((x.shape[0], *hw, mg), spec.quant))
        ctx.b.op(
            "CONV_2D",
            [part, wt, _bias_tensor(ctx, bias[sl], x, part_scales)],
            [outs[g]],
            **window,
        )
    if group > 1:
        ctx.b.op("CONCATENATION", outs, [y.index], axis=3, fused_activation_function=ACT_NONE)


def _hwc_columns(chw: tuple[int, int, int]) -> np.ndarray:
    """Column j of a matrix whose rows are in HWC order holds NCHW-flat element perm[j]."""
    return np.arange(int(np.prod(chw))).reshape(chw).transpose(1, 2, 0).reshape(-1)


def gemm(ctx: Context, node: onnx.NodeProto) -> None:
    """Gemm (alpha = beta = 1, A not transposed) and MatMul by a constant: FULLY_CONNECTED."""
    x = ctx.value(node.input[0], node, keep_chw=True)
    w = ctx.qconst(node.input[1], node)
    a = attributes(node)
    if node.op_type == "Gemm" and (
        a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0
    ):
        raise ctx.refuse("only Gemm with alpha = beta = 1 and transA = 0 is supported", node)
    if w.data.ndim != 2:
        raise ctx.refuse(f"the weight must be a matrix (it is {w.data.shape})", node)
    trans_b = node.op_type == "Gemm" and a.get("transB", 0)
    data, axis = (w.data, 0) if trans_b else (w.data.T, 1)
    scales = _weight_scales(ctx, node, w, axis)
    n, k = data.shape
    if x.shape[-1] != k or (node.op_type == "Gemm" and len(x.shape) != 2):
        raise ctx.fail(f"input {x.shape} does not match the weight {w.data.shape}", node)
    if x.chw is not None:
        data = data[:, _hwc_columns(x.chw)]
    wt = ctx.b.const(np.ascontiguousarray(data), scale=scales.tolist(), zero_point=0)
    bias = (
        _bias_tensor(ctx, _bias_values(ctx, node, x, scales, n), x, scales)
        if node.op_type == "Gemm"
        else -1
    )
    spec = ctx.output_spec(node)
    y = ctx.result(spec, (*x.shape[:-1], n))
    src = x.index
    ctx.b.op(
        "FULLY_CONNECTED",
        [src, wt, bias],
        [y.index],
        weights_format=0,
        keep_num_dims=len(x.shape) > 2,
        asymmetric_quantize_inputs=False,
        fused_activation_function=spec.act,
    )


def pool(ctx: Context, node: onnx.NodeProto) -> None:
    """MaxPool and AveragePool (padding excluded from the average, as TFLite's). Under `ort`
    an AveragePool over the whole unpadded map is a MEAN, as onnxruntime computes it."""
    x = ctx.value(node.input[0], node)
    a = attributes(node)
    k = tuple(a.get("kernel_shape", ()))
    if len(k) != 2:
        raise ctx.refuse(f"only 2-D pools are supported (kernel {k})", node)
    strides, dil, pads = _window(ctx, node, x, k)  # type: ignore[arg-type]
    if dil != (1, 1) or a.get("storage_order", 0):
        raise ctx.refuse("dilated pools and storage_order=1 are not supported", node)
    if ctx.ort and node.op_type == "AveragePool" and k == tuple(x.shape[2:]) and not any(pads):
        # onnxruntime's QLinearAveragePool runs a window over the whole map, unpadded, as its
        # global average pool (an int32 sum, one requantisation): MEAN, as GlobalAveragePool
        global_average_pool(ctx, node)
        return
    padding = _padding(ctx, x, k, strides, dil, pads)  # type: ignore[arg-type]
    if padding is None or (padding == SAME and a.get("count_include_pad", 0)):
        raise ctx.refuse(
            f"pads {pads} are not TFLite's SAME or VALID padding (or padding "
            "counts in the average)",
            node,
        )
    hw = _out_hw(ctx, node, x.shape[2:], k, strides, dil, pads)  # type: ignore[arg-type]
    opcode = "MAX_POOL_2D" if node.op_type == "MaxPool" else "AVERAGE_POOL_2D"
    spec = ctx.output_spec(node)
    shape = (x.shape[0], x.shape[1], *hw)
    # onnxruntime's QLinearAveragePool quantizes to the output's own parameters
    quant = spec.quant if ctx.ort and opcode == "AVERAGE_POOL_2D" else x.quant
    tmp = Value(ctx.tensor((shape[0], *hw, shape[1]), quant), shape, quant, nhwc=True)
    ctx.b.op(
        opcode,
        [x.index],
        [tmp.index],
        padding=padding,
        stride_w=strides[1],
        stride_h=strides[0],
        filter_width=k[1],
        filter_height=k[0],
        fused_activation_function=ACT_NONE,
    )
    ctx.settle(tmp, spec, node)


def global_average_pool(ctx: Context, node: onnx.NodeProto) -> None:
    """GlobalAveragePool: MEAN over H and W (kept), which requantizes as TFLite's converter."""
    x = ctx.value(node.input[0], node)
    if len(x.shape) != 4 or not x.nhwc:
        raise ctx.refuse(f"only NCHW maps are supported (input {x.shape})", node)
    spec = ctx.output_spec(node)
    if spec.act != ACT_NONE:
        raise ctx.refuse("a Relu/Clip after GlobalAveragePool is not supported", node)
    y = ctx.result(spec, (*x.shape[:2], 1, 1), nhwc=True)
    ctx.b.op("MEAN", [x.index, ctx.int32([1, 2])], [y.index], keep_dims=True)


def reduce_mean(ctx: Context, node: onnx.NodeProto) -> None:
    """ReduceMean over H and W of an NCHW map (what PyTorch's `x.mean((2, 3))` exports): MEAN as
    for GlobalAveragePool, the channels as a matrix when `keepdims` is 0. onnxruntime has no
    quantized ReduceMean and runs its group in float (fusion.py names it in the note)."""
    x = ctx.value(node.input[0], node)
    attrs = attributes(node)
    if len(node.input) > 1 and node.input[1]:
        axes = [int(a) for a in np.asarray(ctx.const(node.input[1], node)).reshape(-1)]
    else:
        axes = [int(a) for a in attrs.get("axes", [])]
    axes = sorted(a % 4 for a in axes)
    if len(x.shape) != 4 or not x.nhwc or axes != [2, 3]:
        raise ctx.refuse(
            f"only a mean over H and W of an NCHW map is supported (axes {axes}, input {x.shape})",
            node,
            "average the map with nn.AdaptiveAvgPool2d(1) or x.mean((2, 3))",
        )
    keep = bool(attrs.get("keepdims", 1))
    flat = _flattened(ctx, node, x.shape[:2]) if keep else None
    if flat is not None:  # the exporter's AdaptiveAvgPool2d(1) + flatten: quantized after it
        ctx.done.add(flat)
        keep = False
    spec = ctx.output_spec(node if flat is None else ctx.graph.node[flat])
    if spec.act != ACT_NONE:
        raise ctx.refuse("a Relu/Clip after ReduceMean is not supported", node)
    shape = (*x.shape[:2], 1, 1) if keep else tuple(x.shape[:2])
    y = ctx.result(spec, shape, nhwc=keep)
    ctx.b.op("MEAN", [x.index, ctx.int32([1, 2])], [y.index], keep_dims=keep)


def _flattened(ctx: Context, node: onnx.NodeProto, nc: tuple[int, ...]) -> int | None:
    """The index of the one Flatten (axis 1) or Reshape to (N, C) reading `node`'s float output,
    which onnxruntime's quantizer quantizes after rather than before; else None."""
    readers = ctx.consumers.get(node.output[0], [])
    if len(readers) != 1 or node.output[0] in ctx.outputs:
        return None
    nxt = ctx.graph.node[readers[0]]
    if nxt.op_type == "Flatten":
        return readers[0] if int(attributes(nxt).get("axis", 1)) == 1 else None
    if nxt.op_type != "Reshape" or len(nxt.input) < 2 or nxt.input[1] not in ctx.consts:
        return None
    target = [int(v) for v in np.asarray(ctx.consts[nxt.input[1]]).reshape(-1)]
    if len(target) != 2:
        return None
    dims = [nc[k] if v == 0 else v for k, v in enumerate(target)]
    if dims.count(-1) == 1:
        known = abs(dims[0] * dims[1])  # the other dimension
        dims[dims.index(-1)] = nc[0] * nc[1] // max(1, known)
    return readers[0] if tuple(dims) == tuple(nc) else None
