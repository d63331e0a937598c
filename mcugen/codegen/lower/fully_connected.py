"""FULLY_CONNECTED: int8 (per-tensor or per-channel weights), int16 activations with int8 weights
(TFLM's 16x8 path) and float32."""

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
from mcugen.model.ir import Graph, Operator, Tensor

PARAMS = "mcu_fully_connected_params_t"
#: TensorType INT32 in the options' `quantized_bias_type` (TFLite schema).
TENSOR_TYPE_INT32 = 2
#: MultiplyByQuantizedMultiplier(int64) asserts shift in [-31, 8).
INT64_SHIFTS = range(-31, 8)


def check_int16_zero_points(op: Operator, *tensors: Tensor) -> None:
    """TFLM's 16x8 kernels require symmetric int16 activations."""
    for t in tensors:
        if qparams(op, t).zero_point != 0:
            raise unsupported(op, f"int16 tensor {t.index} has a non-zero zero point")


def int16_accumulator(op: Operator, bias: Tensor | None) -> str:
    """'int64' or 'int32': TFLM accumulates 16x8 products in the bias type; without a bias, in
    the options' quantized_bias_type (int64 unless it says int32)."""
    if bias is not None:
        return check_dtype(op, bias, "int64", "int32")
    return "int32" if op.options.get("quantized_bias_type", 0) == TENSOR_TYPE_INT32 else "int64"


def check_int64_shifts(op: Operator, shifts: Array) -> None:
    if any(int(s) not in INT64_SHIFTS for s in shifts.values):
        raise unsupported(op, "an int64-accumulator rescale has a shift outside [-31, 7]")


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
