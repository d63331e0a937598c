"""The widened int8 matrix product (runtime_c/kernels/opt/mat_mult_s8.c) behind the 1x1 CONV_2D
and FULLY_CONNECTED variants, and its short requantisation (mcugen/codegen/lower/opt_mat_mult.py
short_requant): which layers get it, and opt == reference == TFLM bit for bit on random shapes
of each class (one row and pairs of rows, odd pixel counts, depths 1 to 3 and not multiples of
4, channels not multiples of 2 or 4, in place, pruned channels with biases near 2^30, outputs
whose sums reach the bounds)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mcugen.codegen.lower import Array, Value, lower
from mcugen.codegen.lower.opt_mat_mult import pair_stream, short_requant, widened_params
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from support import SLOW, assert_variant_exact, pointwise


def dense(batch: int, depth: int, units: int, seed: int, *, scale: float = 0.4) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((batch, depth), "int8", scale=0.05, zero_point=int(rng.integers(-128, 128)))
    w = b.const(rng.integers(-127, 128, (units, depth), dtype=np.int8), scale=0.02)
    bias = b.const(rng.integers(-900, 900, units, dtype=np.int32), scale=0.05 * 0.02)
    y = b.activation((batch, units), "int8", scale=scale, zero_point=int(rng.integers(-128, 128)))
    b.op("FULLY_CONNECTED", [x, w, bias], [y])
    b.output(y)
    return b.tflite()


def params_of(model: bytes) -> list[dict[str, Value]]:
    graph = import_model(model, source="test")
    found = []
    for op in graph.operators:
        params = widened_params(graph, op, lower(graph, op))
        assert params is not None
        found.append(dict(params))
    return found


@SLOW
@given(
    hw=st.tuples(st.integers(1, 5), st.integers(1, 5)),
    in_c=st.integers(1, 21),
    out_c=st.integers(1, 13),
    pruned=st.integers(0, 3),
    chain=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_pointwise_short(
    hw: tuple[int, int], in_c: int, out_c: int, pruned: int, chain: bool, seed: int
) -> None:
    """Full-range activations take the short requantisation, pruned channels included; odd
    pixel counts end on one row; chained, the second layer runs in place (more or fewer
    outputs than inputs)."""
    model = pointwise(hw, in_c, out_c, seed, pruned=min(pruned, out_c), chain=chain)
    assert all("short_shifts" in p for p in params_of(model))
    assert_variant_exact(model, "conv_2d_1x1_s8")


@SLOW
@given(
    batch=st.integers(1, 3),
    depth=st.integers(1, 41),
    units=st.integers(1, 11),
    seed=st.integers(0, 1000),
)
def test_dense_short(batch: int, depth: int, units: int, seed: int) -> None:
    """One row (four channels a pass, then a pair, then one) and pairs of rows."""
    model = dense(batch, depth, units, seed)
    assert all("short_shifts" in p for p in params_of(model))
    assert_variant_exact(model, "fully_connected_s8")


def test_long_requantisation_where_short_does_not_apply() -> None:
    """A ReLU6 narrower than int8's range, and per-tensor weights whose pruned channel's bias
    is near 2^30 (no per-channel multiplier to hold its constant), keep the long one."""
    for model in (
        pointwise((3, 3), 8, 6, seed=1, act=3),
        pointwise((3, 3), 8, 6, seed=2, pruned=1, per_channel=False, pruned_bias=(-(2**30),)),
    ):
        assert all("short_shifts" not in p for p in params_of(model))
        assert_variant_exact(model, "conv_2d_1x1_s8")


def test_short_requantisation_bounds() -> None:
    """The sum bound decides: |acc| under 2^30 with the rounding term inside int32; a right
    shift of 0 (e = 0) has no short form."""
    rows = np.full((1, 4), 127, dtype=np.int64)
    ref: dict[str, Value] = {
        "act_min": -128,
        "act_max": 127,
        "output_offset": -128,
        "multipliers": Array("int32_t", (1 << 30,)),
        "shifts": Array("int32_t", (-8,)),
    }
    assert short_requant(rows, Array("int32_t", (1000,)), ref) is not None
    assert short_requant(rows, Array("int32_t", (2**30 - 128 * 4 * 127,)), ref) is None
    ref["shifts"] = Array("int32_t", (0,))
    assert short_requant(rows, Array("int32_t", (1000,)), ref) is None


def test_pair_stream_layout_and_choice() -> None:
    """The stream: the first pair's doubled biases (each twice), then per pair each channel's
    multiplier, rounding term (2 offset + 1) << shift and shift, then the next pair's biases (0
    after the last); only for depths that are multiples of 4 and even channel counts (else the
    arrays)."""
    params: tuple[tuple[str, Value], ...] = (
        ("output_offset", -3),
        ("num_channels", 1),
        ("multipliers", Array("int32_t", (1 << 30,))),
        ("bias", Array("int32_t", (10, -20, 30, 40))),
        ("short_shifts", Array("int32_t", (4,))),
    )
    found = dict(pair_stream(params, 8))
    assert set(found) == {"output_offset", "num_channels", "stream"}
    m, r = 1 << 30, -5 << 4
    b0, b1 = (10, 10, -20, -20), (30, 30, 40, 40)
    pair = (m, r, 4, m, r, 4)
    assert found["stream"] == Array("int32_t", (*b0, *pair, *b1, *pair, 0, 0, 0, 0))
    assert pair_stream(params, 6) == params
    odd = tuple((k, Array("int32_t", (1, 2, 3)) if k == "bias" else v) for k, v in params)
    assert pair_stream(odd, 8) == odd
    model = pointwise((3, 3), 8, 6, seed=3)
    gen = assert_variant_exact(model, "conv_2d_1x1_s8")
    assert [low.function for low in gen.lowered.values()] == ["mcu_conv_2d_1x1_s8_pairs"]
