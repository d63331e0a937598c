"""FULLY_CONNECTED: int8 (per-tensor or per-channel weights), int16 activations with int8 weights
(TFLM's 16x8 path) and float32."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, Params, member, register
from mcugen.codegen.lower._common import (
    REQUANT,
    activation_params,
    check_accumulator,
    check_dtype,
    check_int16_zero_points,
    check_int64_accumulator,
    check_int64_shifts,
    check_operands,
    inp,
    int16_accumulator,
    invalid,
    multiplier_arrays,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "float32")

PARAMS = "mcu_fully_connected_params_t"


def check_shapes(op: Operator, x: Tensor, w: Tensor, y: Tensor, bias: Tensor | None) -> int:
    """TFLite's Prepare: a 2-D filter [output depth, accumulation depth]; the output's last
    dimension is the output depth, its other elements the batches, and the input holds batches x
    accumulation depth elements; a bias has one element per output channel. Returns the depth."""
    if len(w.shape) != 2:
        raise invalid(op, f"filter shape {w.shape} is not 2-D [output depth, input depth]")
    depth, accumulation = w.shape
    if not y.shape or y.shape[-1] != depth or depth < 1:
        raise invalid(op, f"output shape {y.shape} does not end in the filter's depth {depth}")
    rows = y.num_elements // depth
    if x.num_elements != rows * accumulation:
        raise invalid(
            op,
            f"input shape {x.shape} does not hold {rows} rows of the filter's {accumulation} "
            "inputs",
        )
    if bias is not None and bias.num_elements != depth:
        raise invalid(op, f"bias has {bias.num_elements} elements; expected {depth}")
    return depth


@register("FULLY_CONNECTED", types=TYPES)
def lower_fully_connected(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (2, 3))
    x, w, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    bias = inp(graph, op, 2)
    dtype = check_dtype(op, x, *TYPES)
    check_dtype(op, w, "int8" if dtype == "int16" else dtype)
    check_dtype(op, y, dtype)
    depth = check_shapes(op, x, w, y, bias)
    if op.options.get("weights_format", 0) != 0:
        raise unsupported(op, "shuffled weights format is not supported")
    if not w.is_constant and not (dtype == "float32" and w.is_variable):
        # float32 weights may be variables: a training graph's (mcugen/train/)
        raise unsupported(op, "non-constant weights are not supported")
    act = activation_params(op, y)
    if dtype == "float32":
        if bias is not None:
            check_dtype(op, bias, "float32")
        return Lowered("fully_connected", "mcu_fully_connected_f32", PARAMS, member(REQUANT, act))
    function = "mcu_fully_connected_int8"
    if dtype == "int16":
        check_int16_zero_points(op, x, y)
        acc = int16_accumulator(op, bias)
        function = "mcu_fully_connected_int16" + ("_acc32" if acc == "int32" else "")
    elif bias is not None:
        check_dtype(op, bias, "int32")
    qx, qw, qy = qparams(op, x), qparams(op, w), qparams(op, y)
    if len(qw.scales) not in (1, depth):
        raise invalid(op, f"filter has {len(qw.scales)} scales for {depth} output channels")
    scales = [qx.scale * s / qy.scale for s in qw.scales]
    mults, shifts = multiplier_arrays(scales)
    if function == "mcu_fully_connected_int16":
        check_int64_shifts(op, shifts)
        check_int64_accumulator(op, w, bias, 0)
    filter_offset = -qw.zero_point if not qw.per_channel else 0
    if x.dtype == "int8":
        check_accumulator(op, x, w, bias, 0, tuple(int(s) for s in shifts.values), filter_offset)
    requant: Params = (
        ("input_offset", -qx.zero_point),
        ("output_offset", qy.zero_point),
        *act,
        ("num_channels", len(scales)),
        ("multipliers", mults),
        ("shifts", shifts),
    )
    params = (("filter_offset", filter_offset), *member(REQUANT, requant))
    return Lowered("fully_connected", function, PARAMS, params)
