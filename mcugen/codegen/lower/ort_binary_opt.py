"""Optimised ADD and MUL with onnxruntime's numerics (lower/ort_pointwise.py's QLinearAdd and
QLinearMul): runtime_c/kernels/opt/ort_binary_s8.c, the reference kernels' element values
(the same float operations, shared through mcu/kernels/ort_elementwise.h) walked without a
broadcast offset an element, and rounded as mcu_ort_round_narrow rounds (one VRINTR on the M7,
the 1.5 * 2^23 shifter elsewhere), which is nearbyintf's result below 2^22. The variant is taken
when every operand pair's value stays below `VALUE_LIMIT` (`value_bound`); the parameters are
the reference lowering's, so the outputs are the reference kernels' byte for byte."""

from __future__ import annotations

from dataclasses import replace

from mcugen.codegen.lower import Lowered, fields
from mcugen.codegen.lower._rung import rung
from mcugen.model.ir import Graph, Operator

#: the ort reference functions (ort_pointwise.py) these take over, and the variants' own
ORT_BINARY = {
    "ADD": ("mcu_add_int8_ort", "mcu_add_s8_ort", "add_s8_ort"),
    "MUL": ("mcu_mul_int8_ort", "mcu_mul_s8_ort", "mul_s8_ort"),
}

#: |value| below this for every pair of stored operands: mcu_ort_round_narrow is exact below
#: 2^22 (ort_opt.py's SCALED_LIMIT, the same margin)
VALUE_LIMIT = 2.0**21


def value_bound(opcode: str, p: dict[str, int | float]) -> float:
    """An upper bound of |value| (mcu_ort_add_value, mcu_ort_mul_value) over the stored int8
    operands -128..127, in float64: the values are linear (ADD) or bilinear (MUL) in the
    operands, so their largest magnitude is at a corner; one unit added covers the float32
    roundings (each relative 2^-24 of a value below 2^22)."""
    domain = int(p["domain"])
    lo, hi = -128 + domain, 127 + domain
    ratio_a, ratio_b, fixed = float(p["ratio_a"]), float(p["ratio_b"]), float(p["fixed"])
    if opcode == "ADD":
        corners = [a * ratio_a + b * ratio_b + fixed for a in (lo, hi) for b in (lo, hi)]
    else:
        za, zb = int(p["zero_a"]), int(p["zero_b"])
        products = [(a - za) * (b - zb) for a in (lo, hi) for b in (lo, hi)]
        corners = [v * ratio_a + fixed for v in products]
    return max(abs(c) for c in corners) + 1.0


def _ort_binary(op: Operator, reference: Lowered) -> Lowered | None:
    ref_function, function, name = ORT_BINARY[op.opcode]
    if reference.function != ref_function:
        return None
    p = {k: v for k, v in fields(reference.params).items() if isinstance(v, int | float)}
    if value_bound(op.opcode, p) >= VALUE_LIMIT:
        return None
    return replace(
        reference,
        function=function,
        variant=name,
        sources=("opt/ort_binary_s8.c",),
    )


@rung("add_s8_ort", "ADD")
def add_s8_ort(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """onnxruntime's numerics: int8, any broadcast (operands of the output's shape or of its
    trailing dimensions without a per-element offset), |value| < 2^21."""
    return _ort_binary(op, reference)


@rung("mul_s8_ort", "MUL")
def mul_s8_ort(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """onnxruntime's numerics: int8, any broadcast (operands of the output's shape or of its
    trailing dimensions without a per-element offset), |value| < 2^21."""
    return _ort_binary(op, reference)
