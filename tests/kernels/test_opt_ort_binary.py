"""The optimised ADD and MUL of `--onnx-numerics ort` (mcugen/codegen/lower/ort_binary_opt.py,
runtime_c/kernels/opt/ort_binary_s8.c): their outputs equal the ort reference kernels'
(reference/ort_elementwise.c) byte for byte over shapes of each walk (same shape, a trailing
operand read cyclically on either side, a scalar, any other broadcast), scales (powers of two,
whose ratios put many values on a rounding tie, and arbitrary ones), zero points and activation
ranges; every pair of int8 operands, where the ties are checked against numpy's round half to
even; the bound (`value_bound`) that keeps the reference kernel. Agreement with onnxruntime
itself is test_onnx_numerics.py's (host) and tests/qemu/test_onnx_twin.py's (F767 twin), which
run these kernels by default."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.codegen.lower import fields, lower
from mcugen.codegen.lower.ort_binary_opt import VALUE_LIMIT, value_bound
from mcugen.link.host_run import random_inputs
from mcugen.model.ir import Graph
from mcugen.model.numerics import NUMERICS_METADATA
from mcugen.model.tflite_import import import_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from support import SLOW, mcugen_outputs
from support.op_models import RELU, RELU6, Operand, add_chain, binary_model

VARIANT = {"ADD": "add_s8_ort", "MUL": "mul_s8_ort"}


def ort_opt(graph: Graph) -> Generated:
    return _ort(graph, "opt")


def ort_reference(graph: Graph) -> Generated:
    return _ort(graph, "reference")


def _ort(graph: Graph, kernels: str) -> Generated:
    graph = replace(graph, metadata={**graph.metadata, NUMERICS_METADATA: b"ort"})
    return generate(graph, options=PlanOptions(kernels=kernels))


def assert_same_bytes(model: bytes, variant: str, inputs: list[list[np.ndarray]]) -> None:
    gen = ort_opt(import_model(model, source="test model"))
    assert {low.variant for low in gen.lowered.values()} == {variant}
    ours = mcugen_outputs(model, inputs, ort_opt)
    theirs = mcugen_outputs(model, inputs, ort_reference)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a[0], b[0], "ort opt and ort reference kernels differ")


#: scales: powers of two (exact ratios: a value on a tie for many operand pairs) or arbitrary
SCALES = st.one_of(st.integers(-9, -1).map(lambda k: 2.0**k), st.floats(0.002, 0.5))
QUANTS = st.tuples(SCALES, st.integers(-128, 127))


@st.composite
def shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(output shape, the other operand's): the same, its trailing dimensions after leading
    1s, a scalar, or 1s anywhere (the reference walk)."""
    y = tuple(draw(st.lists(st.integers(1, 7), min_size=1, max_size=4)))
    kind = draw(st.sampled_from(["same", "trailing", "scalar", "any"]))
    if kind == "same":
        return y, y
    if kind == "trailing":
        keep = draw(st.integers(1, len(y)))
        return y, (1,) * draw(st.integers(0, len(y) - keep)) + y[len(y) - keep :]
    if kind == "scalar":
        return y, (1,) * draw(st.integers(0, len(y)))
    return y, tuple(d if draw(st.booleans()) else 1 for d in y)


@SLOW
@given(
    opcode=st.sampled_from(["ADD", "MUL"]),
    shape=shapes(),
    swap=st.booleans(),
    const=st.booleans(),
    quants=st.tuples(QUANTS, QUANTS, QUANTS),
    act=st.sampled_from([0, RELU, RELU6]),
    seed=st.integers(0, 1000),
)
def test_same_bytes_as_the_reference(
    opcode: str,
    shape: tuple[tuple[int, ...], tuple[int, ...]],
    swap: bool,
    const: bool,
    quants: tuple[tuple[float, int], ...],
    act: int,
    seed: int,
) -> None:
    """The broadcast operand first or second, a constant or an input. MUL's output scale is
    the operands' product over a ratio up to 4 (a real model's; larger ones can leave the
    bound)."""
    full, other = Operand(shape[0], quants[0]), Operand(shape[1], quants[1], const=const)
    a, b = (other, full) if swap else (full, other)
    qy = quants[2]
    if opcode == "MUL":
        qy = (quants[0][0] * quants[1][0] / min(4.0, 8 * qy[0]), qy[1])
    model = binary_model(opcode, "int8", a, b, qy, seed=seed, fused_activation_function=act)
    gen = ort_opt(import_model(model, source="test model"))
    inputs = [random_inputs(gen.graph, s) for s in range(seed, seed + 3)]
    assert_same_bytes(model, VARIANT[opcode], inputs)


def test_default_kernels_take_them_in_place() -> None:
    """`--kernels auto` (the default) picks them; a chain's second ADD writes over the sum
    before it, which dies there, and gives the reference's bytes."""
    model = add_chain((1, 4, 5, 3), (0.05, 0.07, 0.03, 0.1, 0.125), (-128, 3, 7, -128, 5), RELU)
    graph = import_model(model, source="test model")
    graph = replace(graph, metadata={**graph.metadata, NUMERICS_METADATA: b"ort"})
    gen = generate(graph, options=PlanOptions(kernels="auto"))
    assert [low.variant for low in gen.lowered.values()] == ["add_s8_ort", "add_s8_ort"]
    offsets = gen.plan.tensor_offsets()
    last = gen.graph.operators[-1]
    assert offsets[last.outputs[0]] in (offsets[last.inputs[0]], offsets[last.inputs[1]])
    inputs = [random_inputs(gen.graph, s) for s in range(3)]
    assert_same_bytes(model, "add_s8_ort", inputs)


def every_pair(
    opcode: str, qa: tuple[float, int], qb: tuple[float, int], qy: tuple[float, int], act: int
) -> tuple[bytes, list[list[np.ndarray]], np.ndarray]:
    """A model of `opcode` over all 65,536 int8 operand pairs, its input and the pairs' values
    in float64 (exact when the scales are powers of two), as stored less 128 for onnxruntime's
    uint8 domain."""
    model = binary_model(
        opcode,
        "int8",
        Operand((256, 256), qa),
        Operand((256, 256), qb),
        qy,
        fused_activation_function=act,
    )
    grid = np.arange(-128, 128)
    x1, x2 = np.repeat(grid, 256).reshape(256, 256), np.tile(grid, 256).reshape(256, 256)
    if opcode == "ADD":
        value = (x1 - qa[1]) * qa[0] / qy[0] + (x2 - qb[1]) * qb[0] / qy[0] + qy[1]
    else:
        value = (x1 - qa[1]) * (x2 - qb[1]) * (qa[0] * qb[0] / qy[0]) + qy[1]
    inputs = [[x1.astype(np.int8), x2.astype(np.int8)]]
    return model, inputs, value


@pytest.mark.parametrize("opcode", ["ADD", "MUL"])
def test_every_pair_rounds_ties_to_even(opcode: str) -> None:
    """Power-of-two scales: the exact values lie on ties (x.5) for thousands of pairs inside
    the output's range; the optimised kernel gives numpy's round half to even of them (clamped
    to ReLU's range), as the reference kernel does."""
    qa, qb, qy = (0.25, -3), (0.125, 10), (0.5, -20)
    model, inputs, value = every_pair(opcode, qa, qb, qy, RELU)
    lo, hi = qy[1], 127
    ties = (np.mod(value, 1.0) == 0.5) & (value > lo) & (value < hi)
    assert ties.sum() > 1000
    assert np.any(np.rint(value[ties]) % 2 == 0) and np.any(np.floor(value[ties]) % 2 == 0)
    expected = np.clip(np.rint(value), lo, hi).astype(np.int8)
    ours = mcugen_outputs(model, inputs, ort_opt)[0][0]
    np.testing.assert_array_equal(ours, expected)
    assert_same_bytes(model, VARIANT[opcode], inputs)


@pytest.mark.parametrize("opcode", ["ADD", "MUL"])
def test_every_pair_arbitrary_scales(opcode: str) -> None:
    model, inputs, _ = every_pair(opcode, (0.0371, 17), (0.0213, -90), (0.0447, 5), 0)
    assert_same_bytes(model, VARIANT[opcode], inputs)


@pytest.mark.parametrize("opcode", ["ADD", "MUL"])
def test_values_beyond_the_bound_keep_the_reference(opcode: str) -> None:
    """An output scale so small that a value could reach 2^21: the reference kernel runs."""
    model = binary_model(
        opcode, "int8", Operand((4, 4), (1.0, 0)), Operand((4, 4), (1.0, 0)), (1e-4, 0)
    )
    gen = ort_opt(import_model(model, source="test model"))
    (low,) = gen.lowered.values()
    assert low.variant == "reference" and low.function.endswith("_int8_ort")
    assert value_bound(opcode, _numbers(low.params)) >= VALUE_LIMIT


def _numbers(params: tuple) -> dict[str, int | float]:
    return {k: v for k, v in fields(params).items() if isinstance(v, int | float)}


@settings(max_examples=40, deadline=None)
@given(
    opcode=st.sampled_from(["ADD", "MUL"]),
    quants=st.tuples(QUANTS, QUANTS, QUANTS),
)
def test_value_bound_covers_every_pair(opcode: str, quants: tuple[tuple[float, int], ...]) -> None:
    """`value_bound` is at least the largest |value| over all pairs (float64, numpy)."""
    qa, qb, qy = quants
    model, _, _ = every_pair(opcode, qa, qb, qy, 0)
    graph = import_model(model, source="test model")
    graph = replace(graph, metadata={**graph.metadata, NUMERICS_METADATA: b"ort"})
    p = _numbers(lower(graph, graph.operators[0]).params)
    grid = np.arange(-128, 128) + int(p["domain"])
    a, b = np.meshgrid(grid, grid)
    if opcode == "ADD":
        value = a * p["ratio_a"] + b * p["ratio_b"] + p["fixed"]
    else:
        value = (a - p["zero_a"]) * (b - p["zero_b"]) * p["ratio_a"] + p["fixed"]
    assert value_bound(opcode, p) >= np.abs(value).max()
