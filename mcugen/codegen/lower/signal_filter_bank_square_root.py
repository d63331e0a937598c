"""CUSTOM:SignalFilterBankSquareRoot (TFLM signal library): rounded square roots of uint64 channels,
shifted right by an int32 scalar input (FftAutoScale's shift), as uint32.

As TFLM's FilterBankSquareRootPrepare: 2 inputs, 1 output; uint64 rank 1, int32 scalar, uint32
rank 1. Beyond it: output and input of one length (TFLM writes the input's length). A constant
shift must be in [0, 31]; a computed one is checked by the kernel (MCU_ERR_INPUT outside).
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid, unsupported
from mcugen.codegen.lower._signal import counts, operand, options, result
from mcugen.model.ir import Graph, Operator


@register("CUSTOM:SignalFilterBankSquareRoot", types=("uint64",))
def lower_signal_filter_bank_square_root(graph: Graph, op: Operator) -> Lowered:
    counts(op, 2, 1)
    x = operand(graph, op, 0, "uint64", rank=1)
    shift = operand(graph, op, 1, "int32", rank=0)
    y = result(graph, op, 0, "uint32", rank=1)
    if y.num_elements != x.num_elements:
        raise invalid(op, f"output holds {y.num_elements} values, input {x.num_elements}")
    if shift.is_constant and not 0 <= int(shift.array()) <= 31:
        raise unsupported(op, f"shift {int(shift.array())} is outside [0, 31]")
    options(op, ())
    return Lowered("signal_filter_bank_square_root", "mcu_signal_filter_bank_square_root_uint64")
