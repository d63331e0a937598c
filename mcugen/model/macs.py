"""Multiply-accumulates per operator: what "instructions per MAC" divides by.

Counted as the reference kernels compute them, padded taps included (a SAME convolution's border
windows count their full size, as the published per-MAC figures of CMSIS-NN and MLPerf Tiny do):
CONV_2D out_h * out_w * out_c * k_h * k_w * (in_c / groups) per batch, DEPTHWISE_CONV_2D
out_h * out_w * out_c * k_h * k_w, FULLY_CONNECTED rows * units * depth, TRANSPOSE_CONV
in_h * in_w * in_c * k_h * k_w * out_c; every other operator 0.
"""

from __future__ import annotations

import math

from mcugen.model.ir import Graph, Operator


def operator_macs(graph: Graph, op: Operator) -> int:
    """The multiply-accumulates of `op` (0 for operators that are not products)."""
    if len(op.inputs) < 2 or min(op.inputs[:2]) < 0 or not op.outputs or op.outputs[0] < 0:
        return 0
    y = graph.tensors[op.outputs[0]]
    if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w = graph.tensors[op.inputs[1]]
        if len(w.shape) != 4:
            return 0
        taps = w.shape[1] * w.shape[2] * (w.shape[3] if op.opcode == "CONV_2D" else 1)
        return y.num_elements * taps
    if op.opcode == "FULLY_CONNECTED":
        w = graph.tensors[op.inputs[1]]
        return y.num_elements * (w.shape[-1] if w.shape else 0)
    if op.opcode == "TRANSPOSE_CONV" and len(op.inputs) >= 3:
        w, x = graph.tensors[op.inputs[1]], graph.tensors[op.inputs[2]]
        return x.num_elements * (math.prod(w.shape[:3]) if len(w.shape) == 4 else 0)
    return 0


def graph_macs(graph: Graph) -> int:
    return sum(operator_macs(graph, op) for op in graph.operators)
