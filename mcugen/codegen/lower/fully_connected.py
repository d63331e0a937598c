"""FULLY_CONNECTED: int8 (per-tensor or per-channel weights), int16 activations with int8 weights
(TFLM's 16x8 path) and float32."""

from __future__ import annotations

from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import (
    activation_params,
    check_dtype,
    check_int16_zero_points,
    check_int64_shifts,
    inp,
    int16_accumulator,
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
    dtype = check_dtype(op, x, "int8", "int16", "float32")
    check_dtype(op, w, "int8" if dtype == "int16" else dtype)
    check_dtype(op, y, dtype)
    if op.options.get("weights_format", 0) != 0:
        raise unsupported(op, "shuffled weights format is not supported")
    if not w.is_constant:
        raise unsupported(op, "non-constant weights are not supported")
    act = activation_params(op, y)
    if dtype == "float32":
        return Lowered("fully_connected", "mcu_fully_connected_f32", PARAMS, act)
    function = "mcu_fully_connected_int8"
    if dtype == "int16":
        check_int16_zero_points(op, x, y)
        acc = int16_accumulator(op, bias)
        function = "mcu_fully_connected_int16" + ("_acc32" if acc == "int32" else "")
    elif bias is not None:
        check_dtype(op, bias, "int32")
    qx, qw, qy = qparams(op, x), qparams(op, w), qparams(op, y)
    scales = [qx.scale * s / qy.scale for s in qw.scales]
    mults, shifts = multiplier_arrays(scales)
    if function == "mcu_fully_connected_int16":
        check_int64_shifts(op, shifts)
    params: tuple[tuple[str, int | float | Array], ...] = (
        ("input_offset", -qx.zero_point),
        ("filter_offset", -qw.zero_point if not qw.per_channel else 0),
        ("output_offset", qy.zero_point),
        *act,
        ("num_channels", len(scales)),
        ("multipliers", mults),
        ("shifts", shifts),
    )
    return Lowered("fully_connected", function, PARAMS, params)
