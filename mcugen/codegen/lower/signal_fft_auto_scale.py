"""CUSTOM:SignalFftAutoScale (TFLM signal library): int16 values shifted left as far as their
largest magnitude allows, and the shift.

As TFLM's FftAutoScalePrepare: 1 input, 2 outputs; input and output int16 of rank 1, the shift an
int32 scalar. Beyond it: input and output of one length (TFLM reads the output's length of input).
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid
from mcugen.codegen.lower._signal import counts, operand, options, result
from mcugen.model.ir import Graph, Operator


@register("CUSTOM:SignalFftAutoScale", types=("int16",))
def lower_signal_fft_auto_scale(graph: Graph, op: Operator) -> Lowered:
    counts(op, 1, 2)
    x = operand(graph, op, 0, "int16", rank=1)
    y = result(graph, op, 0, "int16", rank=1)
    result(graph, op, 1, "int32", rank=0)
    if x.shape != y.shape:
        raise invalid(op, f"input shape {x.shape} differs from output shape {y.shape}")
    options(op, ())
    return Lowered("signal_fft_auto_scale", "mcu_signal_fft_auto_scale_int16")
