"""How many times each operator's kernel reads its weights: what weight staging is judged by.

A plain model from the shapes and the kernel variant each operator got (plan/weight_staging.py
decides with it, the reports print it). Passes over the filter (input 1, read through the tensor
table) per inference:

- the matrix-product variants (conv_2d_1x1_s8, conv_2d_s8, depthwise_as_conv_s8,
  fully_connected_s8; runtime_c/kernels/opt/mat_mult_s8.c) take two rows, i.e. two output
  pixels, a pass: ceil(pixels / 2). A fully connected layer of batch 1 reads them once;
- depthwise_conv_2d_s8 widens each group's weights once into its scratch (or keeps a channel's
  taps in registers on its 3x3 path): once;
- the reference convolutions and depthwise convolutions loop over the filter per output pixel:
  pixels; the reference fully connected once per row;
- a variant that takes its weights from its parameters (conv_2d_stem_s8) never reads the tensor:
  nothing to stage.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcugen.codegen.lower import Lowered
from mcugen.model.ir import Graph, Operator
from mcugen.plan.weight_staging import WeightReads

#: Variants whose kernel reads its filter once per pair of output pixels (rows).
PAIRED = (
    "conv_2d_1x1_s8",
    "conv_2d_s8",
    "depthwise_as_conv_s8",
    "fully_connected_s8",
    # the same kernels with onnxruntime's output stage (codegen/lower/ort_opt.py)
    "conv_2d_1x1_s8_ort",
    "conv_2d_s8_ort",
    "fully_connected_s8_ort",
)
#: Variants whose kernel reads its filter once per inference.
ONCE = ("depthwise_conv_2d_s8", "depthwise_conv_2d_s8_ring", "depthwise_conv_2d_s8_ort")
#: Reference kernels that read the filter once per output pixel (row for FULLY_CONNECTED).
PER_PIXEL = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def _pixels(graph: Graph, op: Operator) -> int:
    """Output pixels (rows of a fully connected layer): every output dimension but the last."""
    shape = graph.tensors[op.outputs[0]].shape
    count = 1
    for d in shape[:-1]:
        count *= max(d, 1)
    return count


def _weights_in_params(low: Lowered) -> bool:
    return any(name == "weights" for name, _ in low.params)


def weight_reads(graph: Graph, lowered: Mapping[int, Lowered]) -> tuple[WeightReads, ...]:
    """Every operator with a constant filter in flash read through the tensor table, and the
    passes its kernel makes over it."""
    found = []
    for index, low in sorted(lowered.items()):
        op = graph.operators[index]
        if op.opcode not in PER_PIXEL or len(op.inputs) < 2 or op.inputs[1] < 0:
            continue
        weights = graph.tensors[op.inputs[1]]
        if not weights.is_constant or not op.outputs or _weights_in_params(low):
            continue
        pixels = _pixels(graph, op)
        if low.variant in PAIRED:
            reads = (pixels + 1) // 2
        elif low.variant in ONCE:
            reads = 1
        elif low.variant == "reference":
            reads = pixels
        else:
            continue  # a variant this model does not know: never staged
        found.append(WeightReads(index, weights.index, weights.nbytes, reads))
    return tuple(found)
