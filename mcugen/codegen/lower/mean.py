"""MEAN: int8, int16 and float32 (TFLM reduce_common.cc PrepareMeanOrSumHelper / EvalMeanHelper).

TFLM runs every integer MEAN through reference_ops::QuantizedMeanOrSum: int32 sums in a scratch
buffer, then one MultiplyByQuantizedMultiplier whose multiplier folds in 1/count. The folding is
done here, at build time, with TFLM's integer arithmetic.
"""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, Value, register
from mcugen.codegen.lower._common import check_dtype, check_operands, out, qparams, req, unsupported
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "float32")

PARAMS = "mcu_mean_params_t"
SUFFIX = {"int8": "int8", "int16": "int16", "float32": "f32"}
MAX_DIMS = 6  # MCU_MAX_DIMS


def resolve_axes(op: Operator, axis: Tensor, rank: int) -> list[int]:
    """reference_ops::ResolveAxis: negative axes count from the end, duplicates dropped."""
    if not axis.is_constant:
        raise unsupported(op, "non-constant axes are not supported")
    if axis.dtype != "int32":
        raise unsupported(op, f"axis of type {axis.dtype} is not supported (TFLM requires int32)")
    resolved: list[int] = []
    for a in (int(v) for v in axis.array().ravel()):
        current = a + rank if a < 0 else a
        if not 0 <= current < rank:
            raise unsupported(op, f"axis {a} is out of range for rank {rank}")
        if current not in resolved:
            resolved.append(current)
    return resolved


def mean_multiplier(in_scale: float, out_scale: float, count: int) -> tuple[int, int]:
    """QuantizeMultiplier(s_in / s_out), then QuantizedMeanOrSum's 1/count folding."""
    multiplier, shift = quant.quantize_multiplier(in_scale / out_scale)
    extra = min(count.bit_length() - 1, 32, 31 + shift)
    return (multiplier << extra) // count, shift - extra


def _quantized_params(
    op: Operator, x: Tensor, y: Tensor, count: int
) -> tuple[tuple[str, Value], ...]:
    qx, qy = qparams(op, x), qparams(op, y)
    if qx.per_channel or qy.per_channel:
        raise unsupported(op, "per-channel quantization is not supported")
    multiplier, shift = mean_multiplier(qx.scale, qy.scale, count)
    return (
        ("input_zp", qx.zero_point),
        ("output_zp", qy.zero_point),
        ("multiplier", multiplier),
        ("shift", shift),
    )


@register("MEAN", types=TYPES)
def lower_mean(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (2,))
    x, axis, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    dtype = check_dtype(op, x, *TYPES)
    check_dtype(op, y, dtype)
    if not 1 <= len(x.shape) <= MAX_DIMS:
        raise unsupported(op, f"input rank {len(x.shape)} is not in 1..{MAX_DIMS}")
    axes = resolve_axes(op, axis, len(x.shape))
    count = 1
    for a in axes:
        count *= x.shape[a]
    if count == 0 or x.num_elements // count != y.num_elements:
        raise unsupported(op, f"output shape {y.shape} is not {x.shape} reduced over {axes}")
    params: tuple[tuple[str, Value], ...] = (
        ("reduce_mask", sum(1 << a for a in axes)),
        ("num_reduced", count),
    )
    if dtype == "float32":
        return Lowered("mean", "mcu_mean_f32", PARAMS, params)
    params += _quantized_params(op, x, y, count)
    scratch = 4 * max(1, y.num_elements)  # the int32 sums TFLM keeps in its scratch buffer
    return Lowered("mean", f"mcu_mean_{SUFFIX[dtype]}", PARAMS, params, scratch_bytes=scratch)
