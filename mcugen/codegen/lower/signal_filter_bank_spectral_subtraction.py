"""CUSTOM:SignalFilterBankSpectralSubtraction (TFLM signal library): noise subtraction per uint32
channel with a running noise estimate.

TFLM keeps the estimate in a persistent buffer (zeroed at Prepare and on Reset) and copies it to
output 1 after each invoke; the importer makes output 1 a variable tensor (tflite_import
KERNEL_STATE_OUTPUTS), so it lives in the persistent state area, is reset with the variables, and
the kernel updates it in place. As TFLM's Prepare: 1 input, 2 outputs, uint32 of rank 1. Beyond it:
input and outputs hold num_channels values (TFLM's loops and copy assume it), smoothing_bits in
[0, 31] and spectral_subtraction_bits in [0, 63] (shift counts), output 1 a variable.
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid, unsupported
from mcugen.codegen.lower._signal import counts, in_range, operand, options, result
from mcugen.model.ir import Graph, Operator

KEYS = (
    "alternate_one_minus_smoothing",
    "alternate_smoothing",
    "clamping",
    "min_signal_remaining",
    "num_channels",
    "one_minus_smoothing",
    "smoothing",
    "smoothing_bits",
    "spectral_subtraction_bits",
)
#: Options TFLM stores as uint32 (an int32 read converted modulo 2^32).
UNSIGNED = (
    "smoothing",
    "one_minus_smoothing",
    "alternate_smoothing",
    "alternate_one_minus_smoothing",
    "min_signal_remaining",
)


@register("CUSTOM:SignalFilterBankSpectralSubtraction", types=("uint32",))
def lower_signal_filter_bank_spectral_subtraction(graph: Graph, op: Operator) -> Lowered:
    counts(op, 1, 2)
    x = operand(graph, op, 0, "uint32", rank=1)
    tensors = (x, result(graph, op, 0, "uint32", rank=1), result(graph, op, 1, "uint32", rank=1))
    opts = options(op, KEYS)
    channels = opts["num_channels"]
    if any(t.num_elements != channels for t in tensors):
        raise invalid(op, f"input and outputs must hold num_channels = {channels} values")
    if not tensors[2].is_variable:
        raise unsupported(op, f"noise estimate tensor {tensors[2].index} is not a variable")
    params = (
        ("num_channels", channels),
        *((name, opts[name] % 2**32) for name in UNSIGNED),
        ("smoothing_bits", in_range(op, "smoothing_bits", opts["smoothing_bits"], 0, 31)),
        (
            "spectral_subtraction_bits",
            in_range(op, "spectral_subtraction_bits", opts["spectral_subtraction_bits"], 0, 63),
        ),
        ("clamping", int(opts["clamping"] != 0)),
    )
    return Lowered(
        "signal_filter_bank_spectral_subtraction",
        "mcu_signal_filter_bank_spectral_subtraction_uint32",
        "mcu_signal_filter_bank_spectral_subtraction_params_t",
        params,
    )
