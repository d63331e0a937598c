"""Graph rewrites that keep every output bit-exact: each returns a new `Graph`, never edits one.

1. PAD fusion (`fuse_pads`): a PAD/PADV2 over H and W only, padding with the input zero point
   (int8) or 0.0 (float32), whose only consumer is a CONV_2D or DEPTHWISE_CONV_2D reading it as
   its input, is removed and its padding moved into the convolution. The kernels skip taps outside
   the input, and a skipped tap adds exactly what a zero-point (or 0.0) tap adds: 0 (float32: the
   running sum starts at +0.0 and adding +-0.0 never changes it). When the resulting padding is what
   SAME or VALID computes for the unpadded input, the convolution gets that padding and the graph
   stays a valid .tflite. Otherwise (e.g. PyTorch's symmetric padding before a stride-2
   convolution) it carries `options[EXPLICIT_PADDING] = (top, left, bottom, right)`, which no
   .tflite can express: such a graph is for codegen only, and `tflite_write` refuses it ("has no
   field mcugen_explicit_padding"). `rewrite(graph, portable=True)` fuses only the expressible ones.
2. Depthwise split over a concatenation (`split_depthwise_over_concatenation`; SERENITY, Ahn et al.
   2020, "kernel-wise partitioning"): CONCATENATION on channels -> DEPTHWISE_CONV_2D with depth
   multiplier 1 becomes one depthwise convolution per concatenated input (channel slices of the
   filter, bias and per-channel quantization) followed by a concatenation of their outputs. Each
   output channel of a depthwise convolution depends on its own channel only, so the result is
   identical; the concatenated input never exists and the inputs can die at their own convolution.
   Proposed here, judged by the caller: `rewrite(graph, judge)` keeps a split only where
   `judge` (a cost of a whole graph: the pipeline passes the planner's peak live bytes of the
   stored order with sharing, plan/aliasing.py `shared_peak`) gets smaller. This module never
   imports the planner.

After a rewrite, tensors no longer used are dropped and indices renumbered (operators keep their
relative order); a graph nothing applies to is returned unchanged. An `OfflineMemoryAllocation`
metadata entry is dropped when tensors are renumbered, as its offsets refer to the old indices.
Complexity: O(operators + tensors) per applied rewrite, plus a live-bytes evaluation per depthwise
candidate. Weakness: the depthwise split is judged on the stored order, not on the order a
scheduler would pick for the rewritten graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import numpy as np

from mcugen.model.ir import Graph, Operator, Quantization, Tensor

#: Conv option holding a padding fused from a PAD that SAME/VALID cannot express (codegen only).
EXPLICIT_PADDING = "mcugen_explicit_padding"
SAME, VALID = 0, 1
CONVOLUTIONS = ("CONV_2D", "DEPTHWISE_CONV_2D")
OFFLINE_PLAN = "OfflineMemoryAllocation"
#: A cost of a whole graph (smaller is better); proposals are kept only when they lower it.
Judge = Callable[[Graph], int]


def rewrite(graph: Graph, judge: Judge, *, portable: bool = False) -> Graph:
    """Every safe rewrite, the judged ones kept where `judge` prefers them; `portable=True` keeps
    the result writable as a .tflite."""
    return split_depthwise_over_concatenation(fuse_pads(graph, portable=portable), judge)


# --- shared editing ----------------------------------------------------------------------------


def rebuild(graph: Graph, tensors: Sequence[Tensor], operators: Sequence[Operator]) -> Graph:
    """The graph with these tensors and operators, unused tensors dropped and indices renumbered."""
    used = set(graph.inputs) | set(graph.outputs)
    for op in operators:
        used.update(t for t in (*op.inputs, *op.outputs, *op.intermediates) if t >= 0)
    new_index = {old: new for new, old in enumerate(sorted(used))}

    def remap(ts: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(new_index[t] if t >= 0 else t for t in ts)

    metadata = {k: v for k, v in graph.metadata.items() if k != OFFLINE_PLAN}
    return Graph(
        tensors=tuple(replace(tensors[old], index=new) for old, new in new_index.items()),
        operators=tuple(
            replace(
                op,
                index=pos,
                inputs=remap(op.inputs),
                outputs=remap(op.outputs),
                intermediates=remap(op.intermediates),
            )
            for pos, op in enumerate(operators)
        ),
        inputs=remap(graph.inputs),
        outputs=remap(graph.outputs),
        name=graph.name,
        sha256=graph.sha256,
        metadata=MappingProxyType(metadata),
    )


def _with_options(op: Operator, **changes: Any) -> Operator:
    options = {k: v for k, v in op.options.items() if k not in changes}
    options.update({k: v for k, v in changes.items() if v is not None})
    return replace(op, options=MappingProxyType(options))


def _sole_consumer(graph: Graph, t: int, consumers: dict[int, list[int]]) -> Operator | None:
    """The one operator reading `t` (once), when `t` is not also a graph output."""
    readers = consumers.get(t, [])
    if len(readers) != 1 or t in graph.outputs:
        return None
    return graph.operators[readers[0]]


# --- PAD fusion --------------------------------------------------------------------------------


def fuse_pads(graph: Graph, *, portable: bool = False) -> Graph:
    """Remove each PAD that folds into its convolution (module docstring, item 1)."""
    consumers = graph.consumers()
    operators: list[Operator | None] = list(graph.operators)
    for op in graph.operators:
        if op.opcode not in ("PAD", "PADV2"):
            continue
        pads = _fusable_pads(graph, op)
        conv = _sole_consumer(graph, op.outputs[0], consumers) if pads else None
        if pads is None or conv is None or conv.opcode not in CONVOLUTIONS:
            continue
        if conv.inputs[0] != op.outputs[0]:
            continue
        current = operators[conv.index]
        assert current is not None
        fused = _fused_conv(graph, current, op.inputs[0], pads, portable)
        if fused is not None:
            operators[op.index] = None
            operators[conv.index] = fused
    kept = [op for op in operators if op is not None]
    if len(kept) == len(graph.operators):
        return graph
    return rebuild(graph, graph.tensors, kept)


def _fusable_pads(graph: Graph, op: Operator) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right) of a PAD over H and W only with a neutral pad value, else None."""
    if len(op.inputs) < 2 or len(op.outputs) != 1:
        return None
    x, y, paddings = (graph.tensors[t] for t in (op.inputs[0], op.outputs[0], op.inputs[1]))
    if x.is_constant or len(x.shape) != 4 or not paddings.is_constant:
        return None
    if paddings.dtype not in ("int32", "int64") or paddings.num_elements != 8:
        return None
    p = [int(v) for v in paddings.array().ravel()]
    if p[0:2] != [0, 0] or p[6:8] != [0, 0] or min(p) < 0:
        return None
    value = graph.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
    if not _neutral_pad_value(x, y, value):
        return None
    return p[2], p[3], p[4], p[5]


def _neutral_pad_value(x: Tensor, y: Tensor, value: Tensor | None) -> bool:
    """The PAD fills with what a skipped convolution tap contributes: the zero point, or 0.0."""
    if value is not None and (not value.is_constant or value.num_elements != 1):
        return False
    if x.dtype == "float32" and y.dtype == "float32":
        return value is None or float(value.array().ravel()[0]) == 0.0
    if x.dtype != "int8" or y.dtype != "int8" or x.quant is None or y.quant is None:
        return False
    same = (x.quant.scales, x.quant.zero_points) == (y.quant.scales, y.quant.zero_points)
    if not same or x.quant.per_channel:
        return False
    return value is None or int(value.array().ravel()[0]) == y.quant.zero_point


def _fused_conv(
    graph: Graph, conv: Operator, x: int, pads: tuple[int, int, int, int], portable: bool
) -> Operator | None:
    """`conv` reading `x` with the PAD's padding added to its own, or None if it cannot be."""
    if EXPLICIT_PADDING in conv.options or not conv.inputs or conv.inputs[0] == -1:
        return None
    if int(conv.options.get("padding", SAME)) not in (SAME, VALID):
        return None
    in_hw = graph.tensors[x].shape[1:3]
    padded = graph.tensors[conv.inputs[0]].shape[1:3]
    filt = graph.tensors[conv.inputs[1]].shape[1:3]
    out = graph.tensors[conv.outputs[0]].shape[1:3]
    stride = (int(conv.options.get("stride_h", 1)), int(conv.options.get("stride_w", 1)))
    dilation = (
        int(conv.options.get("dilation_h_factor", 1)),
        int(conv.options.get("dilation_w_factor", 1)),
    )
    if min(stride + dilation) < 1 or len(filt) != 2:
        return None
    padding = int(conv.options.get("padding", SAME))
    total: list[int] = []
    for i in range(2):
        eff = (filt[i] - 1) * dilation[i] + 1
        computed = (padded[i] + stride[i] - 1) // stride[i]  # ComputeOutSize(SAME)
        own = max((computed - 1) * stride[i] + eff - padded[i], 0) if padding == SAME else 0
        before, after = pads[2 * i] + own // 2, pads[2 * i + 1] + own - own // 2
        span = in_hw[i] + before + after - eff
        if span < 0 or span // stride[i] + 1 != out[i]:
            return None
        total += [before, after]
    inputs = (x, *conv.inputs[1:])
    for option in (VALID, SAME):
        if _expressible(option, in_hw, filt, stride, dilation, out, (total[0], total[2])):
            return replace(_with_options(conv, padding=option), inputs=inputs)
    if portable:
        return None
    explicit = (total[0], total[2], total[1], total[3])
    return replace(
        _with_options(conv, padding=VALID, **{EXPLICIT_PADDING: explicit}), inputs=inputs
    )


def _expressible(
    option: int,
    in_hw: tuple[int, ...],
    filt: tuple[int, ...],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    out: tuple[int, ...],
    before: tuple[int, int],
) -> bool:
    """TFLM's SAME/VALID on the unpadded input gives this output size and padding before."""
    for i in range(2):
        eff = (filt[i] - 1) * dilation[i] + 1
        if option == SAME:
            size = (in_hw[i] + stride[i] - 1) // stride[i]
        else:
            size = (in_hw[i] + stride[i] - eff) // stride[i]
        pad = max((size - 1) * stride[i] + eff - in_hw[i], 0) // 2
        if size != out[i] or pad != before[i]:
            return False
    return True


# --- depthwise split over a concatenation ------------------------------------------------------


def split_depthwise_over_concatenation(graph: Graph, judge: Judge) -> Graph:
    """Split each channel concatenation feeding a depthwise convolution where `judge` says that
    is better (module docstring, item 2). Candidates are tried in operator order, each on the
    graph so far; `judge` runs only when there is a candidate."""
    best: int | None = None
    current = graph
    position = 0
    while position < len(current.operators):
        candidate = _split_at(current, current.operators[position])
        if candidate is not None:
            best = judge(current) if best is None else best
            cost = judge(candidate)
            if cost < best:
                current, best = candidate, cost
        position += 1
    return current


def _split_at(graph: Graph, cat: Operator) -> Graph | None:
    """The graph with the concatenation `cat` and its depthwise consumer split, or None."""
    if cat.opcode != "CONCATENATION" or len(cat.inputs) < 2 or len(cat.outputs) != 1:
        return None
    z = graph.tensors[cat.outputs[0]]
    dw = _sole_consumer(graph, z.index, graph.consumers())
    if dw is None or not _splittable(graph, cat, z, dw):
        return None
    tensors = list(graph.tensors)
    new_ops: list[Operator] = []
    outputs = []
    start = 0
    for a in cat.inputs:
        channels = graph.tensors[a].shape[3]
        inputs, out = _slice_depthwise(graph, dw, tensors, start, start + channels)
        new_ops.append(replace(dw, inputs=(a, *inputs), outputs=(out,)))
        outputs.append(out)
        start += channels
    new_ops.append(replace(cat, inputs=tuple(outputs), outputs=dw.outputs))
    operators: list[Operator] = []
    for op in graph.operators:
        if op.index == cat.index:
            operators.extend(new_ops)
        elif op.index != dw.index:
            operators.append(op)
    return rebuild(graph, tensors, operators)


def _splittable(graph: Graph, cat: Operator, z: Tensor, dw: Operator) -> bool:
    if dw.opcode != "DEPTHWISE_CONV_2D" or dw.inputs[0] != z.index or len(z.shape) != 4:
        return False
    axis = int(cat.options.get("axis", 0))
    if axis not in (3, -1) or int(cat.options.get("fused_activation_function", 0)) != 0:
        return False
    if any(t < 0 or len(graph.tensors[t].shape) != 4 for t in cat.inputs):
        return False
    w = graph.tensors[dw.inputs[1]]
    bias = graph.tensors[dw.inputs[2]] if len(dw.inputs) > 2 and dw.inputs[2] >= 0 else None
    if not w.is_constant or w.shape[3] != z.shape[3]:
        return False
    if int(dw.options.get("depth_multiplier", 1)) != 1:
        return False
    if bias is not None and (not bias.is_constant or bias.num_elements != z.shape[3]):
        return False
    return all(_sliceable(t) for t in (w, bias) if t is not None)


def _sliceable(t: Tensor) -> bool:
    """Per-tensor, or per-channel along the last axis (the channel)."""
    q, rank = t.quant, len(t.shape)
    return (
        q is None
        or not q.per_channel
        or (q.axis % rank == rank - 1 and len(q.scales) == t.shape[-1])
    )


def _slice_depthwise(
    graph: Graph, dw: Operator, tensors: list[Tensor], lo: int, hi: int
) -> tuple[tuple[int, ...], int]:
    """New filter (and bias) tensors for channels lo:hi, and a new output tensor, appended."""
    inputs = []
    for k in (1, 2):
        if k >= len(dw.inputs) or dw.inputs[k] < 0:
            continue
        inputs.append(_append(tensors, _channel_slice(graph.tensors[dw.inputs[k]], lo, hi)))
    y = graph.tensors[dw.outputs[0]]
    out = replace(y, name=f"{y.name}/channels_{lo}_{hi}", shape=(*y.shape[:3], hi - lo))
    return tuple(inputs), _append(tensors, out)


def _channel_slice(t: Tensor, lo: int, hi: int) -> Tensor:
    """Channels lo:hi of a constant whose last axis is the channel, quantization sliced too."""
    data = np.ascontiguousarray(t.array()[..., lo:hi]).tobytes()
    quant = t.quant
    if quant is not None and quant.per_channel:
        quant = Quantization(quant.scales[lo:hi], quant.zero_points[lo:hi], quant.axis)
    shape = (*t.shape[:-1], hi - lo)
    return replace(t, name=f"{t.name}/channels_{lo}_{hi}", shape=shape, data=data, quant=quant)


def _append(tensors: list[Tensor], t: Tensor) -> int:
    tensors.append(replace(t, index=len(tensors)))
    return len(tensors) - 1
