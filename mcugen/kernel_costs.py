"""What a kernel costs in instructions, estimated before anything runs: per-MAC rates of each
kernel variant and of the reference kernels, and per output element of the layers without MACs,
all measured on the QEMU twins. mcugen/kernel_choice.py says with them what giving layers kernels
with less scratch costs, and `auto` takes that choice only where it is cheap. `mcugen measure`
gives each layer's real count on a twin; these are a guide, within about 20 % on the MLPerf
models and the generated graphs (KWS under --kernels memory: +1.42 M estimated, +1.70 M
measured)."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered
from mcugen.model.ir import Graph
from mcugen.model.macs import operator_macs

#: Instructions per MAC of each kernel variant, measured on the M4 twin (nucleo-l4r5zi,
#: `mcugen measure --kernels ...`, MLPerf Tiny KWS and VWW layers and the generated graphs):
#: what the plan's estimate of a swap's cost uses. Per layer the rate varies with the shape
#: (KWS's 1x1 layers run conv_2d_1x1_s8 at 1.04, VWW's at 1.1-1.5), so the estimate is a guide;
#: `mcugen measure` gives each layer's count.
PER_MAC = {
    "conv_2d_stem_s8": 1.25,
    # IC ResNet-8's 3x3 layers: 1.10-1.34 (F767 and M4 twins); small-channel ones up to 2.4
    "conv_2d_s8": 1.3,
    "conv_2d_s8_col2": 2.2,
    "conv_2d_s8_col": 2.5,
    "conv_2d_s8_lean": 1.95,
    "conv_2d_1x1_s8": 1.1,
    "conv_2d_1x1_s8_staged": 1.55,
    "conv_2d_1x1_s8_direct": 1.62,
    "conv_2d_1x1_s8_lean": 2.0,
    "depthwise_conv_2d_s8_layer": 1.9,
    "depthwise_conv_2d_s8": 2.4,
    "depthwise_conv_2d_s8_ring": 3.2,
    "depthwise_conv_2d_s8_lean": 11.2,
    # micro_speech's 8x10 depthwise over one channel, multiplier 8 (conv_2d_s8's kernel): 2.66
    "depthwise_as_conv_s8": 2.66,
    # the same layer with no scratch (conv_2d_s8_lean's kernel): 2.62
    "depthwise_as_conv_s8_lean": 2.62,
    "fully_connected_s8": 2.2,
    # `--onnx-numerics ort`'s (codegen/lower/ort_opt.py): their float output stage costs about
    # 20 instructions an output, so on the small test networks of tests/support/onnx_models.py
    # (8-24 channels; benchmarks/ort_kernels.py --board nucleo-l4r5zi) the rates are high:
    # 1x1 4.4-5.8, depthwise 6.6-7.0, general 2.2 (ResNet, 8 channels) to 5.0 (one input channel)
    "conv_2d_1x1_s8_ort": 5.0,
    "depthwise_conv_2d_s8_ort": 6.8,
    "conv_2d_s8_ort": 3.5,
    # MobileNet's and ResNet's stems (3 -> 8 channels, 3x3; F767 twin): 2.22-2.26
    "conv_2d_stem_s8_ort": 2.3,
    "fully_connected_s8_ort": 8.0,
}
#: conv_2d_s8_lean over fewer than 4 input channels (its runs a window row long, a few bytes
#: each), M4 twin: KWS's first layer (1 channel, 10x4) 3.71, VWW's and IC's stems (3 channels,
#: 3x3) 4.22 and 3.96; over 4 or more (whole words) 1.95 (IC's 3x3 16 -> 16 layers, 1.93-1.94).
LEAN_NARROW_PER_MAC = 4.0

#: The reference kernels' rates on the M4 twin (KWS): a general CONV_2D or DEPTHWISE_CONV_2D
#: about 43 per MAC (the tap loop), a 1x1 CONV_2D or FULLY_CONNECTED about 8.2.
REFERENCE_PER_MAC = {"CONV_2D": 43.3, "DEPTHWISE_CONV_2D": 42.5, "FULLY_CONNECTED": 8.3}
POINTWISE_PER_MAC = 8.2


def per_mac(graph: Graph, op_index: int, kernel: Lowered) -> float | None:
    """The measured instructions per MAC of `kernel` running operator `op_index` (None: none
    measured)."""
    op = graph.operators[op_index]
    if kernel.variant == "conv_2d_s8_lean" and graph.tensors[op.inputs[0]].shape[-1] < 4:
        return LEAN_NARROW_PER_MAC
    if kernel.variant != "reference":
        return PER_MAC.get(kernel.variant)
    if op.opcode == "CONV_2D" and len(op.inputs) > 1 and op.inputs[1] >= 0:
        shape = graph.tensors[op.inputs[1]].shape
        if len(shape) == 4 and shape[1] == shape[2] == 1:
            return POINTWISE_PER_MAC
    return REFERENCE_PER_MAC.get(op.opcode)


def added_instructions(
    graph: Graph, op_index: int, fastest: Lowered, chosen: Lowered
) -> int | None:
    """The instructions per inference running `chosen` instead of `fastest` adds (estimate)."""
    slow, fast = per_mac(graph, op_index, chosen), per_mac(graph, op_index, fastest)
    if slow is None or fast is None:
        return None
    return round(operator_macs(graph, graph.operators[op_index]) * (slow - fast))


#: Instructions per output element of layers without MACs, measured on the F767 twin
#: (randwire_er24: RELU's reference kernel 47.5, add_s8 11.0); others about 10, views none.
PER_ELEMENT = {"RELU": 48.0, "ADD": 11.0}
OTHER_PER_ELEMENT = 10.0
VIEWS = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS"})


def estimated_instructions(graph: Graph, lowered: dict[int, Lowered]) -> int:
    """The instructions per inference of the whole model, estimated: per MAC where a kernel has
    a measured rate (`PER_MAC`), else per output element (`PER_ELEMENT`)."""
    total = 0.0
    for i, low in lowered.items():
        op = graph.operators[i]
        rate = per_mac(graph, i, low)
        if rate is not None:
            total += rate * operator_macs(graph, op)
        elif op.opcode not in VIEWS and op.outputs and op.outputs[0] >= 0:
            elements = graph.tensors[op.outputs[0]].num_elements
            total += PER_ELEMENT.get(op.opcode, OTHER_PER_ELEMENT) * elements
    return round(total)
