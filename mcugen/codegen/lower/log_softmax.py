"""LOG_SOFTMAX: int8 and float32 (TFLM micro/kernels/log_softmax.cc CalculateOpData).

int8 requires TFLM's fixed output quantization (scale 16/256, zero point 127); beta is 1.
"""

from __future__ import annotations

import numpy as np

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, out, qparams, req, unsupported
from mcugen.codegen.lower.add import smaller_than_one
from mcugen.codegen.lower.softmax import input_radius, preprocess_softmax_scaling
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "float32")

PARAMS = "mcu_log_softmax_params_t"
OUTPUT_SCALE = np.float32(16.0 / 256)
OUTPUT_ZERO_POINT = 127


def _int8_params(op: Operator, x: Tensor, y: Tensor) -> tuple[tuple[str, int], ...]:
    """PreprocessLogSoftmaxScalingExp(1.0, s_in, 5): the Q5.26 input factor, then its inverse
    2^(31 - left_shift) / multiplier as a multiplier below one (all in double)."""
    q = qparams(op, y)
    if np.float32(q.scale) != OUTPUT_SCALE or q.zero_point != OUTPUT_ZERO_POINT:
        raise unsupported(op, "int8 output must have scale 16/256 and zero point 127")
    try:
        multiplier, left_shift = preprocess_softmax_scaling(1.0, qparams(op, x).scale)
    except ValueError as exc:
        raise unsupported(op, str(exc)) from None
    divisor, divisor_shift = smaller_than_one(op, (1 << (31 - left_shift)) / float(multiplier))
    return (
        ("input_multiplier", multiplier),
        ("input_left_shift", left_shift),
        ("reverse_scaling_divisor", divisor),
        ("reverse_scaling_shift", divisor_shift),
        ("diff_min", -input_radius(left_shift)),
    )


@register("LOG_SOFTMAX", types=TYPES)
def lower_log_softmax(graph: Graph, op: Operator) -> Lowered:
    """No sharing trait: a row's maximum and sum are read before any element of it is written,
    but every element of the row is read again afterwards."""
    x, y = req(graph, op, 0), out(graph, op)
    dtype = check_dtype(op, x, *TYPES)
    check_dtype(op, y, dtype)
    if not x.shape or x.shape[-1] < 1 or tuple(x.shape) != tuple(y.shape):
        raise unsupported(op, f"input shape {x.shape} / output shape {y.shape} not supported")
    if dtype == "float32":
        return Lowered("log_softmax", "mcu_log_softmax_f32", PARAMS)
    return Lowered("log_softmax", "mcu_log_softmax_int8", PARAMS, _int8_params(op, x, y))
