"""CUSTOM:SignalWindow (TFLM signal library): int16 input times int16 window weights, shifted.

As TFLM's WindowPrepare: 2 inputs and 1 output, int16 throughout, weights of rank 1, output of the
input's rank. Beyond it (its Eval would read past the input or loop forever): the weights' length
must be positive and divide the input's element count, the output must hold as many elements,
and the shift must be in [0, 31].
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid
from mcugen.codegen.lower._signal import counts, in_range, operand, options, result
from mcugen.model.ir import Graph, Operator


@register("CUSTOM:SignalWindow", types=("int16",))
def lower_signal_window(graph: Graph, op: Operator) -> Lowered:
    counts(op, 2, 1)
    x = operand(graph, op, 0, "int16")
    w = operand(graph, op, 1, "int16", rank=1)
    y = result(graph, op, 0, "int16", rank=len(x.shape))
    if not x.shape:
        raise invalid(op, "the input must have rank >= 1")
    if w.num_elements == 0 or x.num_elements % w.num_elements:
        raise invalid(op, f"{w.num_elements} weights do not divide {x.num_elements} inputs")
    if y.num_elements != x.num_elements:
        raise invalid(op, f"output holds {y.num_elements} elements, input {x.num_elements}")
    shift = in_range(op, "shift", options(op, ("shift",))["shift"], 0, 31)
    return Lowered(
        "signal_window",
        "mcu_signal_window_int16",
        "mcu_signal_window_params_t",
        (("shift", shift),),
    )
