"""SPACE_TO_BATCH_ND: int8 and float32, 4-D NHWC or 3-D NHC (as TFLM supports).

Padding follows TFLite (int8: the output zero point; float32: 0.0). TFLM's kernel never sets the
pad value (SpaceToBatchParams::output_offset is left uninitialised), so its padded positions hold an
arbitrary byte; every other position is identical. Also holds the block/paddings reader shared with
BATCH_TO_SPACE_ND.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, invalid, out, qparams, req, unsupported
from mcugen.model.ir import Graph, Operator, Tensor

PARAMS = "mcu_space_to_batch_nd_params_t"
FUNCTIONS = {"int8": "mcu_space_to_batch_nd_int8", "float32": "mcu_space_to_batch_nd_f32"}


@dataclass(frozen=True)
class BlockSpec:
    """Block sizes and (before, after) amounts per spatial dimension (1 for 3-D, 2 for 4-D)."""

    dtype: str
    block: tuple[int, ...]
    amounts: tuple[tuple[int, int], ...]  # paddings (SPACE_TO_BATCH) or crops (BATCH_TO_SPACE)


def _const_int32(op: Operator, t: Tensor, shape: tuple[int, ...], what: str) -> np.ndarray:
    check_dtype(op, t, "int32")
    if not t.is_constant:
        raise unsupported(op, f"a non-constant {what} tensor is not supported")
    if tuple(t.shape) != shape:
        raise unsupported(op, f"{what} must have shape {shape}, got {t.shape}")
    return t.array()


def block_spec(graph: Graph, op: Operator, amounts_name: str) -> BlockSpec:
    """Check types and ranks as TFLM's Prepare does; read the constant block shape and amounts."""
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise unsupported(op, f"expects 3 inputs (input, block_shape, {amounts_name}), 1 output")
    x, y = req(graph, op, 0), out(graph, op)
    dtype = check_dtype(op, x, *FUNCTIONS)
    check_dtype(op, y, dtype)
    if len(x.shape) not in (3, 4) or len(y.shape) != len(x.shape):
        raise unsupported(op, f"input and output must be 3-D or 4-D, got {x.shape} -> {y.shape}")
    if x.shape[0] < 1:
        raise invalid(op, f"input shape {x.shape} has an empty batch")
    spatial = len(x.shape) - 2
    block = _const_int32(op, req(graph, op, 1), (spatial,), "block_shape")
    amounts = _const_int32(op, req(graph, op, 2), (spatial, 2), amounts_name)
    if (block < 1).any():
        raise unsupported(op, f"block_shape must be positive, got {block.tolist()}")
    if (amounts < 0).any():
        raise unsupported(op, f"{amounts_name} must be non-negative, got {amounts.tolist()}")
    pairs = tuple((int(a), int(b)) for a, b in amounts)
    return BlockSpec(dtype, tuple(int(v) for v in block), pairs)


def hw_params(spec: BlockSpec, prefix: str) -> tuple[tuple[str, int], ...]:
    """(block_h, block_w, <prefix>_top, <prefix>_left); 3-D inputs have no width dimension."""
    block_w, left = (spec.block[1], spec.amounts[1][0]) if len(spec.block) == 2 else (1, 0)
    return (
        ("block_h", spec.block[0]),
        ("block_w", block_w),
        (f"{prefix}_top", spec.amounts[0][0]),
        (f"{prefix}_left", left),
    )


OutputShape = Callable[[Operator, tuple[int, ...], BlockSpec], tuple[int, ...]]


def checked_block_spec(
    graph: Graph, op: Operator, amounts: str, output_shape: OutputShape
) -> tuple[BlockSpec, Tensor]:
    """The block spec (`amounts`: "paddings" or "crops") and the output, whose shape must be
    TFLite's `output_shape` of the input (TFLM writes only inside it)."""
    spec = block_spec(graph, op, amounts)
    x, y = req(graph, op, 0), out(graph, op)
    expected = output_shape(op, x.shape, spec)
    if tuple(y.shape) != expected:
        raise unsupported(op, f"output shape {y.shape} differs from the computed {expected}")
    return spec, y


def space_to_batch_shape(op: Operator, shape: tuple[int, ...], spec: BlockSpec) -> tuple[int, ...]:
    """TFLite's output shape: batch times the block volume, padded spatial dims divided by block."""
    dims = [shape[0] * int(np.prod(spec.block))]
    for size, block, (before, after) in zip(shape[1:-1], spec.block, spec.amounts, strict=True):
        padded = size + before + after
        if padded % block != 0:
            raise unsupported(op, f"padded size {padded} is not a multiple of the block {block}")
        dims.append(padded // block)
    return (*dims, shape[-1])


@register("SPACE_TO_BATCH_ND", types=tuple(FUNCTIONS))
def lower_space_to_batch_nd(graph: Graph, op: Operator) -> Lowered:
    """Block, leading paddings and the pad value; the output shape must be TFLite's."""
    spec, y = checked_block_spec(graph, op, "paddings", space_to_batch_shape)
    pad_value = qparams(op, y).zero_point if spec.dtype == "int8" else 0
    params = (*hw_params(spec, "pad"), ("pad_value", pad_value))
    return Lowered("space_to_batch_nd", FUNCTIONS[spec.dtype], PARAMS, params)
