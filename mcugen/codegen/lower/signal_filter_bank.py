"""CUSTOM:SignalFilterBank (TFLM signal library): mel channels over a uint32 energy spectrum.

Inputs: 0 energies (uint32), 1 weights, 2 unweights, 3 channel frequency starts, 4 channel weight
starts, 5 channel widths (int16); output uint64. As TFLM's FilterBankPrepare: 6 inputs, 1 output,
all of rank 1 and those types. Beyond it (its Eval indexes the energies and weights with the
values of inputs 3..5): inputs 1..5 must be constant, inputs 3..5 hold num_channels + 1 entries,
every channel's frequencies lie inside the energies and its weights inside both weight tables;
the output holds at most num_channels values (TFLM copies the output's size from its
num_channels-entry work area).
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid, unsupported
from mcugen.codegen.lower._signal import counts, operand, options, result
from mcugen.model.ir import Graph, Operator, Tensor

MAX_CHANNELS = 4096


def _check_tables(op: Operator, channels: int, energy: Tensor, tables: list[Tensor]) -> None:
    weights, unweights, freq_starts, weight_starts, widths = tables
    for t in tables:
        if not t.is_constant:
            raise unsupported(op, f"tensor {t.index} must be constant (its indices are checked)")
    for t in (freq_starts, weight_starts, widths):
        if t.num_elements < channels + 1:
            raise invalid(op, f"tensor {t.index} has fewer than num_channels + 1 entries")
    weight_count = min(weights.num_elements, unweights.num_elements)
    # Python ints: int16 sums would wrap and let an out-of-range channel pass (found by fuzzing).
    rows = zip(*(t.array().astype(int).tolist() for t in tables[2:]), strict=False)
    for c, (freq, first, width) in enumerate(list(rows)[: channels + 1]):
        if width <= 0:
            continue
        if freq < 0 or freq + width > energy.num_elements:
            raise invalid(op, f"channel {c} reads energies [{freq}, {freq + width})")
        if first < 0 or first + width > weight_count:
            raise invalid(op, f"channel {c} reads weights [{first}, {first + width})")


@register("CUSTOM:SignalFilterBank", types=("uint32",))
def lower_signal_filter_bank(graph: Graph, op: Operator) -> Lowered:
    counts(op, 6, 1)
    energy = operand(graph, op, 0, "uint32", rank=1)
    tables = [operand(graph, op, i, "int16", rank=1) for i in range(1, 6)]
    y = result(graph, op, 0, "uint64", rank=1)
    channels = options(op, ("num_channels",))["num_channels"]
    if not 1 <= channels <= MAX_CHANNELS:
        raise unsupported(op, f"num_channels {channels} is outside [1, {MAX_CHANNELS}]")
    if y.num_elements > channels:
        raise invalid(op, f"output holds {y.num_elements} values, more than {channels} channels")
    _check_tables(op, channels, energy, tables)
    return Lowered(
        "signal_filter_bank",
        "mcu_signal_filter_bank_uint32",
        "mcu_signal_filter_bank_params_t",
        (("num_channels", channels),),
    )
