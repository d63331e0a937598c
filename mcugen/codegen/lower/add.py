"""ADD: int8 and int16 (TFLM's left_shift 20 / 15 scheme), int32 and float32, numpy broadcasting.

Also holds the checks shared by the broadcasting binary operators (SUB, MUL, MAXIMUM, MINIMUM,
PRELU): operand types and the output shape.
"""

from __future__ import annotations

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import (
    activation_params,
    check_dtype,
    check_int16_zero_points,
    check_operands,
    elementwise_traits,
    fused_activation,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.errors import UnsupportedError
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of ADD (declared with its registration).
ADD_TYPES = ("int8", "int16", "int32", "float32")
PARAMS = "mcu_add_params_t"
MAX_DIMS = 6  # MCU_MAX_DIMS
LEFT_SHIFT_INT8 = 20
#: add_common.cc / sub_common.cc: inputs are shifted left by 20 (int8) or 15 (int16) bits.
LEFT_SHIFT = {"int8": LEFT_SHIFT_INT8, "int16": 15}
Params = tuple[tuple[str, int | float], ...]


def binary_operands(graph: Graph, op: Operator, *dtypes: str) -> tuple[Tensor, Tensor, Tensor, str]:
    """(input1, input2, output, dtype) of a broadcasting binary op; all three of one `dtypes`."""
    check_operands(op, (2,))
    a, b, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    dtype = check_dtype(op, a, *dtypes)
    check_dtype(op, b, dtype)
    check_dtype(op, y, dtype)
    check_broadcast(op, a, b, y)
    return a, b, y, dtype


def check_broadcast(op: Operator, a: Tensor, b: Tensor, y: Tensor) -> None:
    """The output's shape must be the numpy broadcast of the inputs' shapes, of rank <= 6."""
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        raise unsupported(op, f"shapes {a.shape} and {b.shape} do not broadcast") from None
    if shape != tuple(y.shape):
        raise unsupported(op, f"output shape {y.shape} is not the broadcast shape {shape}")
    if len(shape) > MAX_DIMS:
        raise unsupported(op, f"rank {len(shape)} exceeds the runtime's {MAX_DIMS} dimensions")


def smaller_than_one(op: Operator, real: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp, which TFLM aborts on outside (0, 1)."""
    if not 0.0 < real < 1.0:
        raise unsupported(op, f"rescale factor {real} is outside (0, 1); TFLM rejects it")
    try:
        return quant.quantize_multiplier_smaller_than_one_exp(real)
    except UnsupportedError as exc:
        raise unsupported(op, exc.what) from None


def add_sub_params(
    op: Operator, y: Tensor, zero_points: tuple[int, int], reals: tuple[float, float, float]
) -> Params:
    """Parameters of the int8/int16 ADD/SUB kernels from the three rescale factors TFLM computes."""
    (m1, s1), (m2, s2), (mo, so) = (smaller_than_one(op, r) for r in reals)
    return (
        ("left_shift", LEFT_SHIFT[y.dtype]),
        ("input1_offset", -zero_points[0]),
        ("input1_multiplier", m1),
        ("input1_shift", s1),
        ("input2_offset", -zero_points[1]),
        ("input2_multiplier", m2),
        ("input2_shift", s2),
        ("output_offset", qparams(op, y).zero_point),
        ("output_multiplier", mo),
        ("output_shift", so),
        *activation_params(op, y),
    )


def add_rescales(
    s1: float, s2: float, s_out: float, left_shift: int = LEFT_SHIFT_INT8
) -> tuple[float, float, float]:
    """add_common.cc: twice the larger input scale, everything in double."""
    twice_max = 2.0 * max(s1, s2)
    return s1 / twice_max, s2 / twice_max, twice_max / ((1 << left_shift) * s_out)


def quantized_add_sub(op: Operator, a: Tensor, b: Tensor, y: Tensor, kernel: str) -> Lowered:
    """int8 (left_shift 20) or int16 (left_shift 15, zero points 0) ADD or SUB."""
    if y.dtype == "int16":
        check_int16_zero_points(op, a, b, y)
    qa, qb, qy = qparams(op, a), qparams(op, b), qparams(op, y)
    reals = add_rescales(qa.scale, qb.scale, qy.scale, LEFT_SHIFT[y.dtype])
    params = add_sub_params(op, y, (qa.zero_point, qb.zero_point), reals)
    return Lowered(kernel, f"mcu_{kernel}_{y.dtype}", f"mcu_{kernel}_params_t", params)


def lower_add_int32(op: Operator, a: Tensor, b: Tensor) -> Lowered:
    """TFLM's integer ADD (add.cc EvalAdd): unquantized operands, a wrapping sum. TFLM clamps it
    to the whole int32 range whatever the fused activation, so a model asking for one is
    rejected rather than run without it."""
    if a.quant is not None or b.quant is not None:
        raise unsupported(op, "int32 operands must not be quantized (TFLM requires it)")
    if fused_activation(op) != quant.ACT_NONE:
        raise unsupported(op, "int32 with a fused activation (TFLM ignores it)")
    return Lowered("add", "mcu_add_int32", PARAMS)


@register("ADD", traits=elementwise_traits, types=ADD_TYPES)
def lower_add(graph: Graph, op: Operator) -> Lowered:
    a, b, y, dtype = binary_operands(graph, op, *ADD_TYPES)
    if dtype == "float32":
        return Lowered("add", "mcu_add_f32", PARAMS, activation_params(op, y))
    if dtype == "int32":
        return lower_add_int32(op, a, b)
    return quantized_add_sub(op, a, b, y, "add")
