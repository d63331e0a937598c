"""A float ONNX model's means over the map written as GlobalAveragePool before `mcugen quantize`
quantizes it, so that onnxruntime fuses them.

PyTorch 2.x's exporter writes both `x.mean((2, 3))` and `nn.AdaptiveAvgPool2d(1)` as ReduceMean
over axes 2 and 3. onnxruntime has no quantized ReduceMean: it dequantizes, averages in float and
quantizes again, which mcugen's integer mean matches on about 98.4 % of the outputs of a small
DS-CNN (500 inputs). GlobalAveragePool computes the same float values and onnxruntime fuses it
(QLinearGlobalAveragePool), which mcugen matches exactly. So each ReduceMean of a 4-D tensor over
axes {2, 3} becomes GlobalAveragePool, followed by Flatten(axis 1) when it dropped those axes
(keepdims 0; a batch of 1 flattens to the same (N, C)). Nothing else changes. O(nodes)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _axes(node: onnx.NodeProto, consts: dict[str, np.ndarray]) -> list[int] | None:
    for attr in node.attribute:
        if attr.name == "axes":
            return list(helper.get_attribute_value(attr))
    if len(node.input) > 1 and node.input[1]:
        if node.input[1] not in consts:
            return None
        return [int(a) for a in consts[node.input[1]].reshape(-1)]
    return None  # no axes: a mean over every axis


def pooled_means(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """`model` with its ReduceMean nodes over H and W of 4-D tensors as GlobalAveragePool (and a
    Flatten where keepdims is 0), and how many were rewritten."""
    try:
        shaped = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - without shapes nothing is rewritten
        return model, 0
    ranks = {
        v.name: len(v.type.tensor_type.shape.dim)
        for v in (*shaped.graph.input, *shaped.graph.value_info, *shaped.graph.output)
        if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")
    }
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    nodes, count = [], 0
    for node in model.graph.node:
        axes = _axes(node, consts) if node.op_type == "ReduceMean" else None
        if axes is None or ranks.get(node.input[0]) != 4 or sorted(a % 4 for a in axes) != [2, 3]:
            nodes.append(node)
            continue
        keep = next(
            (helper.get_attribute_value(a) for a in node.attribute if a.name == "keepdims"), 1
        )
        out = node.output[0]
        pooled = out if keep else f"{out}_pooled"
        nodes.append(
            helper.make_node("GlobalAveragePool", [node.input[0]], [pooled], name=node.name)
        )
        if not keep:
            nodes.append(
                helper.make_node("Flatten", [pooled], [out], name=f"{node.name}_flatten", axis=1)
            )
        count += 1
    if not count:
        return model, 0
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    del rewritten.graph.node[:]
    rewritten.graph.node.extend(nodes)
    used = {name for n in nodes for name in n.input}  # the axes ReduceMean read are left over
    kept = [t for t in rewritten.graph.initializer if t.name in used]
    del rewritten.graph.initializer[:]
    rewritten.graph.initializer.extend(kept)
    return rewritten, count
