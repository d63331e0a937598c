"""Pad, Transpose and Resize (nearest): data movement, re-expressed in mcugen's NHWC layout."""

from __future__ import annotations

import numpy as np
import onnx

from mcugen.model.onnx_import.context import (
    NHWC_AXIS,
    TO_NHWC,
    Context,
    Value,
    attributes,
)

#: (coordinate_transformation_mode, nearest_mode) pairs that, for whole upscaling factors, pick
#: input floor(x / factor): TFLite's nearest neighbour without corner alignment or half pixels.
_FLOOR_NEAREST = {
    ("asymmetric", "floor"),
    ("half_pixel", "round_prefer_floor"),
    ("half_pixel", "round_prefer_ceil"),
    ("pytorch_half_pixel", "round_prefer_floor"),
    ("pytorch_half_pixel", "round_prefer_ceil"),
}


def _ir_axes(x: Value) -> list[int]:
    """ONNX axis -> IR axis of `x`."""
    return list(NHWC_AXIS) if x.nhwc else list(range(len(x.shape)))


def _pad_value_is_zero(ctx: Context, node: onnx.NodeProto, x: Value) -> bool:
    if len(node.input) < 3 or not node.input[2]:
        return True
    name = node.input[2]
    if name in ctx.qconsts:
        return bool(np.all(ctx.qconsts[name].real() == 0))
    v = np.asarray(ctx.const(name, node))
    if v.dtype == np.uint8:
        return bool(np.all(v.astype(np.int16) - 128 == x.quant.zero_point))
    if v.dtype == np.int8:
        return bool(np.all(v == x.quant.zero_point))
    return bool(np.all(v == 0))


def pad(ctx: Context, node: onnx.NodeProto) -> None:
    """Pad with zeros (constant mode): PAD, which writes the zero point."""
    x = ctx.value(node.input[0], node)
    mode = attributes(node).get("mode", b"constant")
    if (mode.decode() if isinstance(mode, bytes) else mode) != "constant":
        raise ctx.refuse(f"Pad mode {mode!r} is not supported (constant is)", node)
    if not _pad_value_is_zero(ctx, node, x):
        raise ctx.refuse("Pad with a value other than 0 is not supported", node)
    pads = [int(p) for p in np.asarray(ctx.const(node.input[1], node)).reshape(-1)]
    rank = len(x.shape)
    if len(pads) != 2 * rank or min(pads) < 0 or (len(node.input) > 3 and node.input[3]):
        raise ctx.refuse(f"pads {pads} (negative, partial axes or another rank)", node)
    shape = tuple(d + pads[i] + pads[i + rank] for i, d in enumerate(x.shape))
    ir = [[0, 0] for _ in range(rank)]
    for a, j in enumerate(_ir_axes(x)):
        ir[j] = [pads[a], pads[a + rank]]
    spec = ctx.output_spec(node)
    y = Value(-1, shape, x.quant, nhwc=x.nhwc)
    y = Value(ctx.tensor(y.ir_shape, x.quant), shape, x.quant, nhwc=x.nhwc)
    ctx.b.op("PAD", [x.index, ctx.int32(ir)], [y.index])
    ctx.settle(y, spec, node)


def transpose(ctx: Context, node: onnx.NodeProto) -> None:
    """Transpose: no operator when the permutation is the identity in the IR layout (an NCHW
    map transposed to NHWC is already stored so: the result is plain, in ONNX order), else
    TRANSPOSE, a rank-4 result stored NHWC."""
    x = ctx.value(node.input[0], node)
    rank = len(x.shape)
    perm = [int(p) for p in attributes(node).get("perm", range(rank - 1, -1, -1))]
    if sorted(perm) != list(range(rank)):
        raise ctx.fail(f"perm {perm} is not a permutation of {rank} axes", node)
    shape = tuple(x.shape[p] for p in perm)
    where = _ir_axes(x)  # the IR position of each ONNX input axis
    plain = [where[p] for p in perm]
    as_nhwc = [where[perm[TO_NHWC[i]]] for i in range(rank)] if rank == 4 else plain
    identity = list(range(rank))
    spec = ctx.output_spec(node)
    if identity in (plain, as_nhwc):
        y = Value(x.index, shape, x.quant, nhwc=rank == 4 and plain != identity)
    else:
        y = Value(-1, shape, x.quant, nhwc=rank == 4)
        y = Value(ctx.tensor(y.ir_shape, x.quant), shape, x.quant, nhwc=rank == 4)
        ctx.b.op("TRANSPOSE", [x.index, ctx.int32(as_nhwc)], [y.index])
    ctx.settle(y, spec, node)


def _resize_factors(ctx: Context, node: onnx.NodeProto, x: Value) -> tuple[int, int]:
    inputs = list(node.input) + [""] * (4 - len(node.input))
    if inputs[3]:
        size = [int(s) for s in np.asarray(ctx.const(inputs[3], node)).reshape(-1)]
        ratios = [s / d for s, d in zip(size, x.shape, strict=False)]
    elif inputs[2]:
        ratios = [float(s) for s in np.asarray(ctx.const(inputs[2], node)).reshape(-1)]
    else:
        raise ctx.refuse("Resize needs constant scales or sizes", node)
    if (
        len(ratios) != 4
        or ratios[:2] != [1.0, 1.0]
        or any(r < 1 or r != int(r) for r in ratios[2:])
    ):
        raise ctx.refuse(f"Resize by {ratios}: only whole upscaling of H and W is supported", node)
    return int(ratios[2]), int(ratios[3])


def resize(ctx: Context, node: onnx.NodeProto) -> None:
    """Resize (nearest, whole factors): RESIZE_NEAREST_NEIGHBOR."""
    x = ctx.value(node.input[0], node)
    a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in attributes(node).items()}
    how = (
        a.get("coordinate_transformation_mode", "half_pixel"),
        a.get("nearest_mode", "round_prefer_floor"),
    )
    if a.get("mode", "nearest") != "nearest" or how not in _FLOOR_NEAREST:
        raise ctx.refuse(
            f"Resize {a.get('mode', 'nearest')} with {how} is not supported "
            "(nearest: asymmetric + floor, or half_pixel + round_prefer_*)",
            node,
        )
    if not x.nhwc:
        raise ctx.refuse(f"Resize of a {x.shape} tensor (NCHW maps only)", node)
    fh, fw = _resize_factors(ctx, node, x)
    shape = (x.shape[0], x.shape[1], x.shape[2] * fh, x.shape[3] * fw)
    spec = ctx.output_spec(node)
    y = Value(-1, shape, x.quant, nhwc=True)
    y = Value(ctx.tensor(y.ir_shape, x.quant), shape, x.quant, nhwc=True)
    ctx.b.op(
        "RESIZE_NEAREST_NEIGHBOR",
        [x.index, ctx.int32(shape[2:])],
        [y.index],
        align_corners=False,
        half_pixel_centers=False,
    )
    ctx.settle(y, spec, node)
