"""Optimised int8 ADD: the per-input rescaling as two 256-entry tables computed at build time.

TFLM's int8 ADD shifts each input (plus its offset) left by 20 bits and rescales it with
MultiplyByQuantizedMultiplierSmallerThanOneExp before summing: for an int8 input that is a
function of 256 values, so the build evaluates it exactly (codegen/quant.py, the same integer
arithmetic) into a table per input, and the kernel only looks up, adds and rescales the sum:
one rescale per element instead of three, bit-exact. Same-shape operands only (no
broadcasting); 2 KB of tables per operator in flash.
"""

from __future__ import annotations

import functools

from mcugen.codegen import quant
from mcugen.codegen.lower import Array, Lowered
from mcugen.codegen.lower._variants import variant
from mcugen.model.ir import Graph, Operator

PARAMS = "mcu_add_s8_table_params_t"


@functools.lru_cache(maxsize=1024)
def rescale_table(offset: int, left_shift: int, multiplier: int, shift: int) -> Array:
    """scaled(x) for x = -128..127, as the reference kernel's add_one computes it."""
    values = []
    for x in range(-128, 128):
        shifted = quant.wrap_i32((offset + x) * (1 << left_shift))
        values.append(quant.mbqm_smaller_than_one(shifted, multiplier, shift))
    return Array("int32_t", tuple(values))


@variant(
    "add_s8",
    "ADD",
    handles="int8, both inputs of the output's shape (no broadcasting)",
)
def add_s8(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
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
    )
