"""The optimised int8 ADD (mcugen/codegen/lower/opt_add.py, runtime_c/kernels/opt/add_s8.c)
against the reference kernel and TFLM: odd and even lengths (the kernel takes two elements a
pass), the full int8 activation range (one saturation) and narrower ones (ReLU with another
zero point, ReLU6), extreme scales and zero points, in place over a dying input, and the build's
bounds (`exact_bounds`) on the scales that reach them."""

from __future__ import annotations

import numpy as np
from hypothesis import given

from mcugen.codegen import quant
from mcugen.codegen.lower.opt_add import exact_bounds, rescale_table
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import (
    SLOW,
    add_chain,
    add_chains,
    assert_variant_exact,
    compare_with_tflm,
    mcugen_outputs,
    reference_kernels,
)


@SLOW
@given(model=add_chains(2, 9, (0.001, 0.6)))
def test_add_chain(model: bytes) -> None:
    """h = x1 + x2, then y = h + x3: the second ADD may write over h, which dies there."""
    assert_variant_exact(model, "add_s8", samples=2)


def test_add_in_place() -> None:
    """The second ADD runs over its first input; 4x5x3 is odd (the single-element tail)."""
    model = add_chain((1, 4, 5, 3), (0.05, 0.07, 0.03, 0.1, 0.12), (-128, 3, 7, -128, -128), 0)
    gen = assert_variant_exact(model, "add_s8", samples=3)
    offsets = gen.plan.tensor_offsets()
    last = gen.graph.operators[-1]
    assert offsets[last.outputs[0]] in (offsets[last.inputs[0]], offsets[last.inputs[1]])


def test_add_every_input_pair() -> None:
    """All 65,536 pairs of int8 inputs through one ADD, with ReLU and a zero point that clamps:
    opt == reference == TFLM."""
    b = GraphBuilder()
    x1 = b.input((256, 256), "int8", scale=0.031, zero_point=-5)
    x2 = b.input((256, 256), "int8", scale=0.047, zero_point=100)
    y = b.activation((256, 256), "int8", scale=0.02, zero_point=-30)
    b.op("ADD", [x1, x2], [y], fused_activation_function=1)
    b.output(y)
    model = b.tflite()
    gen = generate(import_model(model, source="all pairs"))
    assert {low.variant for low in gen.lowered.values()} == {"add_s8"}
    grid = np.arange(-128, 128, dtype=np.int8)
    inputs = [[np.repeat(grid, 256).reshape(256, 256), np.tile(grid, 256).reshape(256, 256)]]
    ours = mcugen_outputs(model, inputs)
    theirs = mcugen_outputs(model, inputs, reference_kernels)
    assert np.array_equal(ours[0][0], theirs[0][0])
    assert not compare_with_tflm(model, inputs=inputs).mismatches


def test_bounds_refuse_what_would_overflow() -> None:
    """An output shift of 0 (no rounding step) or a constant outside int32 keeps the reference."""
    m, s = quant.quantize_multiplier_smaller_than_one_exp(0.25)
    t = rescale_table(0, 20, m, s)
    assert exact_bounds(t, t, m, -20, -128)
    assert not exact_bounds(t, t, m, 0, 0)
    assert not exact_bounds(t, t, m, -30, 127)
    assert np.max(np.abs(np.array(t.values))) < 2**30
