"""BATCH_TO_SPACE_ND: int8 and float32, 4-D NHWC or 3-D NHC, as TFLM's reference kernel."""

from __future__ import annotations

import numpy as np

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import unsupported
from mcugen.codegen.lower.space_to_batch_nd import BlockSpec, checked_block_spec, hw_params
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_batch_to_space_nd_params_t"
FUNCTIONS = {"int8": "mcu_batch_to_space_nd_int8", "float32": "mcu_batch_to_space_nd_f32"}


def batch_to_space_shape(op: Operator, shape: tuple[int, ...], spec: BlockSpec) -> tuple[int, ...]:
    """TFLite's output shape: batch over the block volume, spatial dims times block, cropped."""
    volume = int(np.prod(spec.block))
    if shape[0] % volume != 0:
        raise unsupported(op, f"batch {shape[0]} is not a multiple of the block volume {volume}")
    dims = [shape[0] // volume]
    for size, block, (before, after) in zip(shape[1:-1], spec.block, spec.amounts, strict=True):
        cropped = size * block - before - after
        if cropped <= 0:
            raise unsupported(op, f"crops {before}+{after} remove all of {size}x{block}")
        dims.append(cropped)
    return (*dims, shape[-1])


@register("BATCH_TO_SPACE_ND", types=tuple(FUNCTIONS))
def lower_batch_to_space_nd(graph: Graph, op: Operator) -> Lowered:
    """Block and leading crops; the output shape must be TFLite's (TFLM writes only inside it)."""
    spec, _ = checked_block_spec(graph, op, "crops", batch_to_space_shape)
    return Lowered("batch_to_space_nd", FUNCTIONS[spec.dtype], PARAMS, hw_params(spec, "crop"))
