"""onnxruntime's numerics (lower/_ort.py) for the operators that sum a window: CONV_2D,
DEPTHWISE_CONV_2D, FULLY_CONNECTED (QLinearConv, QGemm, QLinearMatMul: the reference lowering's
checks and window, then MLAS's float32 output stage with scale x_scale * w_scale / y_scale),
AVERAGE_POOL_2D (QLinearAveragePool: float32 taps, sum and division) and MEAN over H and W
(QLinearGlobalAveragePool: the int32 sum times x_scale / (y_scale * H * W))."""

from __future__ import annotations

import numpy as np

from mcugen.codegen.lower import LOWERINGS, Lowered, Params, fields
from mcugen.codegen.lower._common import (
    activation_params,
    check_dtype,
    check_operands,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.codegen.lower._ort import f32, ort_lowering, requant_member, scale_of, zero_of
from mcugen.codegen.lower.conv_2d import conv_traits
from mcugen.codegen.lower.mean import resolve_axes
from mcugen.codegen.lower.pooling import pool_traits
from mcugen.codegen.lower.pooling import window_params as pool_window
from mcugen.model.ir import Graph, Operator
from mcugen.model.numerics import model_domain
from mcugen.model.traits import OpTraits

#: The reference function each lowering takes over (int8); any other falls back to it.
_INT8 = {
    "CONV_2D": "mcu_conv_2d_int8",
    "DEPTHWISE_CONV_2D": "mcu_depthwise_conv_2d_int8",
    "FULLY_CONNECTED": "mcu_fully_connected_int8",
}


def _output_scales(op: Operator, graph: Graph) -> np.ndarray:
    """x_scale * w_scale / y_scale in float32, left to right, per output channel or one."""
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    y = graph.tensors[op.outputs[0]]
    sw = np.asarray(qparams(op, w).scales, np.float32)
    return (scale_of(op, x) * sw) / scale_of(op, y)


@ort_lowering("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
def lower_weighted(graph: Graph, op: Operator) -> Lowered:
    reference = LOWERINGS[op.opcode].lower(graph, op)
    if reference.function != _INT8[op.opcode]:
        return reference
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    known = fields(reference.params)
    if op.opcode == "FULLY_CONNECTED" and known.get("filter_offset", 0) != 0:
        raise unsupported(op, "onnxruntime's numerics need a filter zero point of 0")
    act = (int(known["act_min"]), int(known["act_max"]))  # type: ignore[arg-type]
    rq = requant_member(op, x, y, _output_scales(op, graph), act)
    extra: Params = ()
    if op.opcode == "FULLY_CONNECTED":
        kernel, params_type = "fully_connected", "mcu_ort_fully_connected_params_t"
    else:
        window = tuple((n, v) for n, v in reference.params if n.startswith("win."))
        multiplier = int(known.get("depth_multiplier", 1))  # type: ignore[arg-type]
        kernel, params_type = op.opcode.lower(), "mcu_ort_conv_params_t"
        extra = (*window, ("depth_multiplier", multiplier))
    # never in place with staging (the reference kernels' staging is theirs); pixels in
    # row-major order (MCU_WINDOW_EACH_OUTPUT), so the output may start before the input
    after = conv_traits(graph, op).input_after if op.opcode != "FULLY_CONNECTED" else None
    return Lowered(
        "ort_conv",
        f"mcu_{kernel}_int8_ort",
        params_type,
        (*extra, *rq),
        traits=OpTraits(input_after=after),
        pixels_in_order=True,
    )


@ort_lowering("AVERAGE_POOL_2D")
def lower_average_pool(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (1,))
    x, y = req(graph, op, 0), out(graph, op)
    if x.dtype != "int8":
        return LOWERINGS[op.opcode].lower(graph, op)
    check_dtype(op, y, "int8")
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0::3] != y.shape[0::3]:
        raise unsupported(op, f"input {x.shape} and output {y.shape} are not NHWC of one depth")
    domain = model_domain(graph)
    act = activation_params(op, y)
    params: Params = (
        *pool_window(op, x, y),
        ("input_zero", zero_of(op, x)),
        ("input_scale", float(scale_of(op, x))),
        ("output_scale", float(scale_of(op, y))),
        ("output_zero", float(zero_of(op, y) + domain)),
        ("domain", domain),
        *act,
    )
    return Lowered(
        "ort_pool",
        "mcu_average_pool_2d_int8_ort",
        "mcu_ort_average_pool_params_t",
        params,
        traits=OpTraits(input_after=pool_traits(graph, op).input_after),
        pixels_in_order=True,  # output pixels in row-major order
    )


@ort_lowering("MEAN")
def lower_mean(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (2,))
    x, axis, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    if x.dtype != "int8" or len(x.shape) != 4:
        return LOWERINGS[op.opcode].lower(graph, op)
    check_dtype(op, y, "int8")
    if sorted(resolve_axes(op, axis, 4)) != [1, 2] or tuple(y.shape) != (
        x.shape[0],
        1,
        1,
        x.shape[3],
    ):
        return LOWERINGS[op.opcode].lower(graph, op)
    count = x.shape[1] * x.shape[2]
    scale = scale_of(op, x) / (scale_of(op, y) * f32(count))
    rq = requant_member(op, x, y, np.array([scale], np.float32), (-128, 127))
    return Lowered("ort_pool", "mcu_mean_int8_ort", "mcu_ort_mean_params_t", rq)
