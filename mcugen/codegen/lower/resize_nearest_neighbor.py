"""RESIZE_NEAREST_NEIGHBOR: int8, int16 and float32, as TFLM's reference kernel.

Raw values are copied (quantization parameters are not used, as in TFLM). The source index of
each output row/column is computed at run time in float32; the float32 scale is computed here.
Also holds the shape checks shared with RESIZE_BILINEAR.
"""

from __future__ import annotations

import numpy as np

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, invalid, out, req, unsupported
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_resize_nearest_neighbor_params_t"
FUNCTIONS = {
    "int8": "mcu_resize_nearest_neighbor_int8",
    "int16": "mcu_resize_nearest_neighbor_int16",
    "float32": "mcu_resize_nearest_neighbor_f32",
}


def resize_shapes(
    graph: Graph, op: Operator, *dtypes: str
) -> tuple[str, tuple[int, int], tuple[int, int]]:
    """Check a RESIZE_* operator as TFLM's Prepare does: (dtype, (in_h, in_w), (out_h, out_w)).

    TFLM requires a 4-D input and a constant 1-D int32 size of two elements, and writes the output
    from the size values, so the output tensor's shape must agree with them.
    """
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise unsupported(op, "expects 2 inputs (input, size) and 1 output")
    x, size, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    dtype = check_dtype(op, x, *dtypes)
    check_dtype(op, y, dtype)
    if len(x.shape) != 4:
        raise unsupported(op, f"input must be 4-D (NHWC), got shape {x.shape}")
    if x.shape[1] < 1 or x.shape[2] < 1:
        raise invalid(op, f"input shape {x.shape} has no rows or no columns to resize")
    check_dtype(op, size, "int32")
    if not size.is_constant:
        raise unsupported(op, "a non-constant size tensor is not supported")
    if size.shape != (2,):
        raise unsupported(op, f"size must be a 1-D tensor of 2 elements, got shape {size.shape}")
    out_h, out_w = (int(v) for v in size.array())
    if out_h <= 0 or out_w <= 0:
        raise unsupported(op, f"size must be positive, got {[out_h, out_w]}")
    expected = (x.shape[0], out_h, out_w, x.shape[3])
    if tuple(y.shape) != expected:
        raise unsupported(op, f"output shape {y.shape} does not match the size: {expected}")
    return dtype, (x.shape[1], x.shape[2]), (out_h, out_w)


def nearest_scale(in_size: int, out_size: int, align_corners: bool) -> float:
    """GetNearestNeighbor's scale: a float32 division of the (corner-aligned) sizes."""
    if align_corners and out_size > 1:
        return float(np.float32(in_size - 1) / np.float32(out_size - 1))
    return float(np.float32(in_size) / np.float32(out_size))


@register("RESIZE_NEAREST_NEIGHBOR", types=tuple(FUNCTIONS))
def lower_resize_nearest_neighbor(graph: Graph, op: Operator) -> Lowered:
    """Scales in float32 and the two option flags; the kernel copies whole pixels."""
    dtype, (in_h, in_w), (out_h, out_w) = resize_shapes(graph, op, *FUNCTIONS)
    align = bool(op.options.get("align_corners", False))
    half = bool(op.options.get("half_pixel_centers", False))
    params: tuple[tuple[str, int | float], ...] = (
        ("height_scale", nearest_scale(in_h, out_h, align)),
        ("width_scale", nearest_scale(in_w, out_w, align)),
        ("offset", 0.5 if half else 0.0),
        ("align_corners", int(align)),
        ("half_pixel_centers", int(half)),
    )
    return Lowered("resize_nearest_neighbor", FUNCTIONS[dtype], PARAMS, params)
