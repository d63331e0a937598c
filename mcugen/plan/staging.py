"""Convolutions in place (aliasing.py step 5): which ones the kernels can run with their output
over their input, and the staging scratch they need for it.

The kernels (runtime_c/kernels/reference/conv_2d.c and depthwise_conv_2d.c) detect in-place runs
by their output pointer equalling their input pointer and then stage, in the operator's scratch,
one input channel plane (depthwise) or one input pixel (1x1) at a time; see aliasing.py step 5
for why nothing still needed is overwritten. Pure functions of the graph, O(operators).
"""

from __future__ import annotations

from collections.abc import Mapping

from mcugen.model.ir import Graph, Operator, element_size

CONV_IN_PLACE = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})


def conv_staging_bytes(graph: Graph, op: Operator) -> int | None:
    """Scratch bytes the kernel needs to run `op` with its output over its input (step 5), or
    None when it cannot: int8 or float32, 4D, batch 1."""
    if op.opcode not in CONV_IN_PLACE or len(op.inputs) < 2 or len(op.outputs) != 1:
        return None
    x, w, y = (graph.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if x.dtype != y.dtype or x.dtype not in ("int8", "float32") or w.data is None:
        return None
    if len(x.shape) != 4 or len(y.shape) != 4 or len(w.shape) != 4 or x.shape[0] != 1:
        return None
    size = element_size(x.dtype)
    if op.opcode == "DEPTHWISE_CONV_2D":
        if y.shape[3] != x.shape[3] or y.shape[1] * y.shape[2] > x.shape[1] * x.shape[2]:
            return None
        return x.shape[1] * x.shape[2] * size
    pointwise = w.shape[1] == w.shape[2] == 1 and w.shape[3] == x.shape[3]
    same_grid = y.shape[1:3] == x.shape[1:3]
    strides = (int(op.options.get("stride_h", 1)), int(op.options.get("stride_w", 1)))
    if not pointwise or not same_grid or strides != (1, 1):
        return None
    return x.shape[3] * size


def staging_scratch(
    graph: Graph, aliases: Mapping[int, tuple[int, int]], scratch: Mapping[int, int] | None
) -> dict[int, int]:
    """`scratch` plus the staging bytes of every convolution that `aliases` runs in place."""
    total = dict(scratch or {})
    for op in graph.operators:
        if op.opcode in CONV_IN_PLACE and aliases.get(op.outputs[0]) == (op.inputs[0], 0):
            total[op.index] = total.get(op.index, 0) + (conv_staging_bytes(graph, op) or 0)
    return total
