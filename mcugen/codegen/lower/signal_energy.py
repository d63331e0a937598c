"""CUSTOM:SignalEnergy (TFLM signal library): squared magnitudes of int16 complex values, uint32.

As TFLM's EnergyPrepare: 1 input and 1 output of rank 1, int16 in, uint32 out. Beyond it (its Eval
indexes both with the options): 0 <= start_index and end_index <= the output's length and the
input's complex count. Output elements outside [start_index, end_index) are not written, as in
TFLM (their content is whatever the buffer held).
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid
from mcugen.codegen.lower._signal import counts, operand, options, result
from mcugen.model.ir import Graph, Operator


@register("CUSTOM:SignalEnergy", types=("int16",))
def lower_signal_energy(graph: Graph, op: Operator) -> Lowered:
    counts(op, 1, 1)
    x = operand(graph, op, 0, "int16", rank=1)
    y = result(graph, op, 0, "uint32", rank=1)
    opts = options(op, ("end_index", "start_index"))
    start, end = opts["start_index"], opts["end_index"]
    if start < 0 or end > min(y.num_elements, x.num_elements // 2):
        raise invalid(
            op,
            f"bins [{start}, {end}) exceed the output's {y.num_elements} or the input's "
            f"{x.num_elements // 2} complex values",
        )
    params = (("start_index", start), ("end_index", end))
    return Lowered("signal_energy", "mcu_signal_energy_int16", "mcu_signal_energy_params_t", params)
