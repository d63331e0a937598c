"""Optimised int8 ADD: the per-input rescaling as two 256-entry tables computed at build time.

TFLM's int8 ADD shifts each input (plus its offset) left by 20 bits and rescales it with
MultiplyByQuantizedMultiplierSmallerThanOneExp before summing: for an int8 input that is a
function of 256 values, so the build evaluates it exactly (codegen/quant.py, the same integer
arithmetic) into a table per input, doubled, and the kernel only looks up, adds and rescales
the sum with one SMMULR, an add and a shift (runtime_c/kernels/opt/add_s8.c says why that is
exact). The variant is taken when the bounds that make it exact hold (`exact_bounds`), which
they do for any real model's scales. Same-shape operands only (no broadcasting); 2 KB of
tables per operator in flash.
"""

from __future__ import annotations

import functools

from mcugen.codegen import quant
from mcugen.codegen.lower import Array, Lowered
from mcugen.codegen.lower._rung import rung
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_add_s8_table_params_t"


@functools.lru_cache(maxsize=1024)
def rescale_table(offset: int, left_shift: int, multiplier: int, shift: int) -> Array:
    """2 * scaled(x) for x = -128..127, scaled as the reference kernel's add_one computes it."""
    values = []
    for x in range(-128, 128):
        shifted = quant.wrap_i32((offset + x) * (1 << left_shift))
        values.append(2 * quant.mbqm_smaller_than_one(shifted, multiplier, shift))
    return Array("int32_t", tuple(values))


def exact_bounds(table1: Array, table2: Array, multiplier: int, shift: int, offset: int) -> bool:
    """The kernel's shortcuts are exact: the doubled sum fits in int32 (so SMMULR of it is
    SaturatingRoundingDoublingHighMul of the sum), the output is shifted right by at least 1,
    and the rounding sum x + (x >> 31) + 2^(e-1) + offset * 2^e stays within int32."""
    right = -shift
    if not 1 <= right <= 30 or not 0 <= multiplier < 2**31:
        return False
    peak = max(abs(int(v)) for v in table1.values) + max(abs(int(v)) for v in table2.values)
    if peak > 2**31 - 1:
        return False
    x_peak = (peak * multiplier >> 31) + 1
    constant = (1 << (right - 1)) + offset * (1 << right)
    return x_peak + 1 + abs(constant) < 2**31


@rung("add_s8", "ADD")
def add_s8(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8, both inputs of the output's shape (no broadcasting)."""
    if reference.function != "mcu_add_int8":
        return None
    a, b, y = (graph.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if not a.shape == b.shape == y.shape:
        return None
    p = dict(reference.params)
    ints = {k: v for k, v in p.items() if isinstance(v, int)}
    left = ints["left_shift"]
    table1 = rescale_table(
        ints["input1_offset"], left, ints["input1_multiplier"], ints["input1_shift"]
    )
    table2 = rescale_table(
        ints["input2_offset"], left, ints["input2_multiplier"], ints["input2_shift"]
    )
    out = (ints["output_multiplier"], ints["output_shift"], ints["output_offset"])
    if not exact_bounds(table1, table2, *out):
        return None
    params = (
        ("table1", table1),
        ("table2", table2),
        ("output_multiplier", p["output_multiplier"]),
        ("output_shift", p["output_shift"]),
        ("output_offset", p["output_offset"]),
        ("act_min", p["act_min"]),
        ("act_max", p["act_max"]),
    )
    return Lowered(
        "add",
        "mcu_add_s8_opt",
        PARAMS,
        params,
        variant="add_s8",
        sources=("opt/add_s8.c",),
        output_stride=True,
    )
