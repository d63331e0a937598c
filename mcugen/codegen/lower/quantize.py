"""QUANTIZE: float32 -> int8/int16 (AffineQuantize) and integer requantization (Requantize)."""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import (
    POINTWISE_UNARY,
    check_dtype,
    invalid,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.model.ir import Graph, Operator, Quantization, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("float32", "int8", "uint8", "int16", "int32")

PARAMS = "mcu_quantize_params_t"

# (input, output) integer type pairs that TFLM's QUANTIZE evaluates (quantize_common.cc).
REQUANTIZE_PAIRS = frozenset(
    {
        ("int8", "int8"),
        ("int8", "uint8"),
        ("int8", "int16"),
        ("int8", "int32"),
        ("uint8", "int8"),
        ("int16", "int8"),
        ("int16", "int16"),
        ("int16", "int32"),
        ("int32", "int8"),
        ("int32", "int16"),
    }
)


def _per_tensor(op: Operator, t: Tensor) -> Quantization:
    """The tensor's quantization, which must have a single scale."""
    q = qparams(op, t)
    if q.per_channel:
        raise unsupported(
            op, f"tensor {t.index} is quantized per channel; only per-tensor is supported"
        )
    return q


def _requantize(op: Operator, x: Tensor, y: Tensor, qy: Quantization) -> Lowered:
    """Integer -> integer: multiplier of double(input scale) / double(output scale)."""
    if (x.dtype, y.dtype) not in REQUANTIZE_PAIRS:
        raise unsupported(op, f"requantizing {x.dtype} to {y.dtype} is not supported")
    qx = _per_tensor(op, x)
    multiplier, shift = quant.quantize_multiplier(qx.scale / qy.scale)
    if shift > 30:  # TFLM's MultiplyByQuantizedMultiplier requires shift <= 30 (DCHECK)
        raise unsupported(op, f"rescale factor {qx.scale / qy.scale:g} is too large")
    params = (
        ("input_zero_point", qx.zero_point),
        ("output_zero_point", qy.zero_point),
        ("multiplier", multiplier),
        ("shift", shift),
    )
    return Lowered("quantize", "mcu_quantize_requantize", PARAMS, params)


@register("QUANTIZE", traits=POINTWISE_UNARY, types=TYPES)
def lower_quantize(graph: Graph, op: Operator) -> Lowered:
    """float32 input: round(x / scale) + zero point; integer input: rescale between types."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise unsupported(op, "expects exactly one input and one output")
    x, y = req(graph, op, 0), out(graph, op)
    check_dtype(op, x, *TYPES)
    check_dtype(op, y, "int8", "uint8", "int16", "int32")
    if x.num_elements != y.num_elements:
        raise invalid(op, f"input shape {x.shape} and output shape {y.shape} differ in size")
    qy = _per_tensor(op, y)
    if x.dtype != "float32":
        return _requantize(op, x, y, qy)
    check_dtype(op, y, "int8", "int16")
    params = (("scale", qy.scale), ("output_zero_point", qy.zero_point))
    return Lowered("quantize", "mcu_quantize_f32", PARAMS, params)
