"""PAD and PADV2: int8, int16, int32 and float32 (TFLM pad_common.cc Prepare)."""

from __future__ import annotations

from mcugen.codegen.lower import Array, Lowered, register
from mcugen.codegen.lower._common import (
    GROWS_OVER_INPUT,
    check_dtype,
    check_operands,
    inp,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "int32", "float32")

PARAMS = "mcu_pad_params_t"
SUFFIX = {"int8": "int8", "int16": "int16", "int32": "int32", "float32": "f32"}
MAX_DIMS = 5  # reference_ops::PadKernelMaxDimensionCount


def _paddings(op: Operator, paddings: Tensor, x: Tensor, y: Tensor) -> list[tuple[int, int]]:
    """(before, after) per dimension, checked as TFLM's Prepare checks them."""
    if not paddings.is_constant:
        raise unsupported(op, "non-constant paddings are not supported")
    if paddings.dtype != "int32":
        raise unsupported(op, f"paddings of type {paddings.dtype} are not supported; use int32")
    if paddings.num_elements != 2 * len(y.shape):
        raise unsupported(op, f"paddings shape {paddings.shape} does not match rank {len(y.shape)}")
    flat = [int(v) for v in paddings.array().ravel()]
    pairs = [(flat[2 * i], flat[2 * i + 1]) for i in range(len(y.shape))]
    for i, (lo, hi) in enumerate(pairs):
        if lo < 0 or hi < 0:
            raise unsupported(op, f"negative paddings {pairs} are not supported")
        if x.shape[i] + lo + hi != y.shape[i]:
            raise unsupported(op, f"output shape {y.shape} is not the padded input {x.shape}")
    return pairs


def _pad_value(op: Operator, value: Tensor | None, x: Tensor, y: Tensor) -> int:
    """The default pad value (PAD), after checking the PADV2 value input."""
    if value is not None:
        check_dtype(op, value, x.dtype)
        if value.num_elements != 1:
            raise unsupported(op, "the pad value must be a scalar")
        if x.dtype == "int8":
            qv, qy = qparams(op, value), qparams(op, y)
            if qv.zero_point != qy.zero_point or qv.scale != qy.scale:
                raise unsupported(op, "the pad value's quantization must equal the output's")
        return 0
    return qparams(op, y).zero_point if x.dtype == "int8" else 0


@register("PAD", "PADV2", traits=GROWS_OVER_INPUT, types=TYPES)
def lower_pad(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (2, 3))
    x, paddings, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    value = inp(graph, op, 2)  # TFLM runs PAD and PADV2 alike: the value input is optional
    dtype = check_dtype(op, x, *TYPES)
    check_dtype(op, y, dtype)
    if not 1 <= len(x.shape) <= MAX_DIMS or len(x.shape) != len(y.shape):
        raise unsupported(op, f"input rank {len(x.shape)} (output {len(y.shape)}) not in 1..5")
    pairs = _paddings(op, paddings, x, y)
    params = (
        ("pad_value", _pad_value(op, value, x, y)),
        ("before", Array("int32_t", tuple(lo for lo, _ in pairs))),
        ("after", Array("int32_t", tuple(hi for _, hi in pairs))),
    )
    return Lowered("pad", f"mcu_pad_{SUFFIX[dtype]}", PARAMS, params)
