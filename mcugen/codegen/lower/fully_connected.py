"""FULLY_CONNECTED: int8 (per-tensor or per-channel weights) and float32."""

from __future__ import annotations

from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import (
    activation_params,
    check_dtype,
    inp,
    multiplier_arrays,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_fully_connected_params_t"


@register("FULLY_CONNECTED")
def lower_fully_connected(graph: Graph, op: Operator) -> Lowered:
    x, w, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    bias = inp(graph, op, 2)
    dtype = check_dtype(op, x, "int8", "float32")
    check_dtype(op, w, dtype)
    check_dtype(op, y, dtype)
    if op.options.get("weights_format", 0) != 0:
        raise unsupported(op, "shuffled weights format is not supported")
    if not w.is_constant:
        raise unsupported(op, "non-constant weights are not supported")
    act = activation_params(op, y)
    if dtype == "float32":
        return Lowered("fully_connected", "mcu_fully_connected_f32", PARAMS, act)
    if bias is not None:
        check_dtype(op, bias, "int32")
    qx, qw, qy = qparams(op, x), qparams(op, w), qparams(op, y)
    scales = [qx.scale * s / qy.scale for s in qw.scales]
    mults, shifts = multiplier_arrays(scales)
    params: tuple[tuple[str, int | float | Array], ...] = (
        ("input_offset", -qx.zero_point),
        ("filter_offset", -qw.zero_point if not qw.per_channel else 0),
        ("output_offset", qy.zero_point),
        *act,
        ("num_channels", len(scales)),
        ("multipliers", mults),
        ("shifts", shifts),
    )
    return Lowered("fully_connected", "mcu_fully_connected_int8", PARAMS, params)
