"""CUSTOM:SignalFilterBankLog (TFLM signal library): scaled natural log of uint32 channels, int16.

As TFLM's FilterBankLogPrepare: 1 input (uint32) and 1 output (int16), both of rank 1. Beyond it:
output as long as the input (TFLM writes the input's length), input_correction_bits in [0, 31] (a
shift count). output_scale is used as uint32 (TFLM converts the int32 option).
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid
from mcugen.codegen.lower._signal import counts, in_range, operand, options, result
from mcugen.model.ir import Graph, Operator


@register("CUSTOM:SignalFilterBankLog", types=("uint32",))
def lower_signal_filter_bank_log(graph: Graph, op: Operator) -> Lowered:
    counts(op, 1, 1)
    x = operand(graph, op, 0, "uint32", rank=1)
    y = result(graph, op, 0, "int16", rank=1)
    if y.num_elements != x.num_elements:
        raise invalid(op, f"output holds {y.num_elements} values, input {x.num_elements}")
    opts = options(op, ("input_correction_bits", "output_scale"))
    bits = in_range(op, "input_correction_bits", opts["input_correction_bits"], 0, 31)
    params = (("output_scale", opts["output_scale"] % 2**32), ("input_correction_bits", bits))
    return Lowered(
        "signal_filter_bank_log",
        "mcu_signal_filter_bank_log_uint32",
        "mcu_signal_filter_bank_log_params_t",
        params,
    )
