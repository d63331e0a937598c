"""RESIZE_BILINEAR: float32 (reference_ops::ResizeBilinear) and int8 (ResizeBilinearInteger).

The float path's scales are float32 divisions; the int8 path's are Q10 integers rounded as TFLM
rounds them. Quantization parameters are not used (TFLM interpolates the raw int8 values).
"""

from __future__ import annotations

import numpy as np

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import unsupported
from mcugen.codegen.lower.resize_nearest_neighbor import resize_shapes
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_resize_bilinear_params_t"
FUNCTIONS = {"int8": "mcu_resize_bilinear_int8", "float32": "mcu_resize_bilinear_f32"}
ONE_Q10 = 1 << 10
INT32_MAX = 2**31 - 1


def float_scale(in_size: int, out_size: int, align_corners: bool) -> float:
    """ResizeBilinear's scale: float(in) / out, or float(in - 1) / (out - 1) for aligned corners."""
    if align_corners and out_size > 1:
        return float(np.float32(in_size - 1) / np.float32(out_size - 1))
    return float(np.float32(in_size) / np.float32(out_size))


def q10_scale(in_size: int, out_size: int, align_corners: bool) -> int:
    """ResizeBilinearInteger's scale: (1024 * in + out / 2) / out in integers (all non-negative)."""
    if align_corners and out_size > 1:
        return (ONE_Q10 * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    return (ONE_Q10 * in_size + out_size // 2) // out_size


def q10_last_coordinate(out_size: int, scale_10: int, half_pixel: bool) -> int:
    """The Q10 source coordinate of the last output row/column (the largest one)."""
    last = (out_size - 1) * scale_10
    return last + scale_10 // 2 - ONE_Q10 // 2 if half_pixel else last


def check_q10_in_bounds(
    op: Operator, axis: str, in_size: int, out_size: int, scale_10: int, half_pixel: bool
) -> None:
    """Reject ratios where TFLM's rounded Q10 scale puts the lower source index past the input.

    There TFLM reads outside the input tensor (e.g. 1 -> 70 without aligned corners: the scale
    rounds 14.63 up to 15 and row 69 maps to 1035/1024, row 1 of a 1-row image); the result is
    undefined, so it cannot be matched.
    """
    last = q10_last_coordinate(out_size, scale_10, half_pixel)
    if out_size * scale_10 + scale_10 > INT32_MAX:
        raise unsupported(op, f"{axis} {in_size} -> {out_size} overflows the Q10 coordinates")
    if max(last, 0) // ONE_Q10 > in_size - 1:
        raise unsupported(
            op,
            f"int8 resize of {axis} {in_size} -> {out_size}: TFLM's Q10 scale "
            "reads outside the input for this ratio",
        )


@register("RESIZE_BILINEAR", types=tuple(FUNCTIONS))
def lower_resize_bilinear(graph: Graph, op: Operator) -> Lowered:
    """Scales for the path of the input's type; rejects align_corners with half_pixel_centers."""
    dtype, (in_h, in_w), (out_h, out_w) = resize_shapes(graph, op, *FUNCTIONS)
    align = bool(op.options.get("align_corners", False))
    half = bool(op.options.get("half_pixel_centers", False))
    if align and half:
        raise unsupported(op, "half_pixel_centers requires align_corners to be false")
    if dtype == "float32":
        params: tuple[tuple[str, int | float], ...] = (
            ("height_scale", float_scale(in_h, out_h, align)),
            ("width_scale", float_scale(in_w, out_w, align)),
            ("half_pixel_centers", int(half)),
        )
        return Lowered("resize_bilinear", FUNCTIONS[dtype], PARAMS, params)
    h10, w10 = q10_scale(in_h, out_h, align), q10_scale(in_w, out_w, align)
    check_q10_in_bounds(op, "height", in_h, out_h, h10, half)
    check_q10_in_bounds(op, "width", in_w, out_w, w10, half)
    params = (("height_scale_10", h10), ("width_scale_10", w10), ("half_pixel_centers", int(half)))
    return Lowered("resize_bilinear", FUNCTIONS[dtype], PARAMS, params)
