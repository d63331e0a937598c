"""SVDF: int8 input with int8 or int16 state and time weights (TFLM's full-integer SVDF), float32.

Inputs: 0 input (batch, input_size), 1 weights_feature (filters, input_size), 2 weights_time
(filters, memory), 3 bias (units,), 4 the state, a variable (batch, memory * filters).
At each invoke the kernel shifts the state left by one, writes the feature projection of the input
into the newest column, and reduces the state against the time weights: the state is what the
operator carries from one invoke to the next (plan/persistent.py keeps it outside the arena).

As TFLM's SvdfPrepare: shapes checked; int8 effective scales computed in float32
(input * feature / state, state * time / output) and quantized from double; the int8 kernel applies
no fused activation (TFLM's integer SVDF ignores it). Rejected: an omitted bias (TFLM's Prepare
dereferences it and crashes, for int8 and float32 alike), per-channel weights, SIGN_BIT and other
activations on float32, types other than the above. TFLM's kernel keeps every filter's time
product and every unit's sum in two scratch buffers; mcugen's sums them as they come, in the same
order, and needs none.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, inp, out, qparams, req, unsupported
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "float32")

PARAMS = "mcu_svdf_params_t"
#: Fused activations the float kernel applies (TFLM's ActivationValFloat): NONE, RELU,
#: RELU_N1_TO_1, RELU6, TANH, SIGN_BIT.
FLOAT_ACTIVATIONS = range(6)


@register("SVDF", types=TYPES)
def lower_svdf(graph: Graph, op: Operator) -> Lowered:
    x, feature, time, y = req(graph, op, 0), req(graph, op, 1), req(graph, op, 2), out(graph, op)
    state, bias = req(graph, op, 4), inp(graph, op, 3)
    if len(op.inputs) != 5 or len(op.outputs) != 1:
        raise unsupported(op, "SVDF takes 5 inputs and 1 output")
    if bias is None:
        raise unsupported(op, "SVDF without a bias is not supported (TFLM cannot run it either)")
    operands = _Operands(x, feature, time, bias, state, y)
    _check_shapes(op, operands)
    if not state.is_variable:
        raise unsupported(op, f"state tensor {state.index} is not a variable")
    for w in (feature, time):
        if not w.is_constant:
            raise unsupported(op, f"weights tensor {w.index} is not constant")
    rank = int(op.options.get("rank", 0))
    dtype = check_dtype(op, x, *TYPES)
    if dtype == "float32":
        for t in (feature, time, state, y, bias):
            check_dtype(op, t, "float32")
        act = int(op.options.get("fused_activation_function", 0))
        if act not in FLOAT_ACTIVATIONS:
            raise unsupported(op, f"fused activation {act} is not supported")
        params = (("rank", rank), ("activation", act))
        return Lowered("svdf", "mcu_svdf_f32", PARAMS, params)
    return _lower_int8(op, operands, rank)


class _Operands(NamedTuple):
    x: Tensor
    feature: Tensor
    time: Tensor
    bias: Tensor
    state: Tensor
    y: Tensor


def _check_shapes(op: Operator, operands: _Operands) -> None:
    """SvdfPrepare's shape checks."""
    x, feature, time, bias, state, y = operands
    rank = int(op.options.get("rank", 0))
    for t in (x, feature, time, state, y):
        if len(t.shape) != 2:
            raise unsupported(op, f"tensor {t.index} has shape {t.shape}; SVDF needs rank 2")
    batch, input_size = x.shape
    filters, memory = time.shape
    if rank <= 0 or filters % rank or feature.shape != (filters, input_size):
        raise unsupported(op, f"weights {feature.shape} and {time.shape} do not fit rank {rank}")
    units = filters // rank
    if state.shape != (batch, memory * filters) or y.shape != (batch, units):
        raise unsupported(op, f"state {state.shape} or output {y.shape} do not fit the weights")
    if not bias.shape or bias.shape[0] != units:
        raise unsupported(op, f"bias shape {bias.shape} does not match {units} units")
    if min(batch, input_size, filters, memory) <= 0:
        raise unsupported(op, "a dimension is zero")


def _lower_int8(op: Operator, operands: _Operands, rank: int) -> Lowered:
    x, feature, time, bias, state, y = operands
    check_dtype(op, feature, "int8")
    check_dtype(op, y, "int8")
    wide = check_dtype(op, time, "int8", "int16") == "int16"
    check_dtype(op, state, time.dtype)
    check_dtype(op, bias, "int32")
    qx, qf, qt, qs, qy, qb = (qparams(op, t) for t in (x, feature, time, state, y, bias))
    if any(q.per_channel for q in (qx, qf, qt, qs, qy)):
        raise unsupported(op, "per-channel quantization is not supported")
    f32 = np.float32
    with np.errstate(over="ignore"):  # in float32 as TFLM; an infinity fails quantize_multiplier
        scale_1 = float(f32(qx.scale) * f32(qf.scale) / f32(qs.scale))
        scale_2 = float(f32(qs.scale) * f32(qt.scale) / f32(qy.scale))
    if abs(qb.scale - float(f32(qs.scale) * f32(qt.scale))) >= 1e-5:
        raise unsupported(op, "bias scale differs from state scale times time-weights scale")
    m1, s1 = quant.quantize_multiplier(scale_1)
    m2, s2 = quant.quantize_multiplier(scale_2)
    params = (
        ("rank", rank),
        ("input_zero_point", qx.zero_point),
        ("state_zero_point", qs.zero_point),
        ("output_zero_point", qy.zero_point),
        ("feature_multiplier", m1),
        ("feature_shift", s1),
        ("time_multiplier", m2),
        ("time_shift", s2),
    )
    function = "mcu_svdf_int8_state16" if wide else "mcu_svdf_int8"
    return Lowered("svdf", function, PARAMS, params)
