"""CUSTOM:SignalPCAN (TFLM signal library): per-channel energy normalization of uint32 channels by
a gain looked up from their noise estimate.

As TFLM's PcanPrepare: 3 inputs (uint32 channels, uint32 noise estimate, int16 gain table) and 1
uint32 output, all of rank 1. Beyond it: output as long as the input (TFLM copies the output's
size from the input, then writes the input's length), a noise estimate at least as long, a gain
table of at least 125 entries (the largest estimate's interval reads entries 120..124), snr_shift
in [0, 63].
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid
from mcugen.codegen.lower._signal import counts, in_range, operand, options, result
from mcugen.model.ir import Graph, Operator

MIN_LUT_ENTRIES = 125


@register("CUSTOM:SignalPCAN", types=("uint32",))
def lower_signal_pcan(graph: Graph, op: Operator) -> Lowered:
    counts(op, 3, 1)
    x = operand(graph, op, 0, "uint32", rank=1)
    noise = operand(graph, op, 1, "uint32", rank=1)
    lut = operand(graph, op, 2, "int16", rank=1)
    y = result(graph, op, 0, "uint32", rank=1)
    if y.num_elements != x.num_elements or noise.num_elements < x.num_elements:
        raise invalid(op, "output and noise estimate must be as long as the input")
    if lut.num_elements < MIN_LUT_ENTRIES:
        raise invalid(op, f"the gain table has {lut.num_elements} entries; it needs 125")
    shift = in_range(op, "snr_shift", options(op, ("snr_shift",))["snr_shift"], 0, 63)
    return Lowered(
        "signal_pcan", "mcu_signal_pcan_uint32", "mcu_signal_pcan_params_t", (("snr_shift", shift),)
    )
