"""Channel concatenation in place (issue 34 item 2, plan/channel_slices.py): producers whose
kernel takes an output pixel stride write straight into their slice of a concatenation along the
channels. Bit-exact with TFLM on the host build for each kernel that takes the stride (reference
and optimised 1x1 and general convolutions, the optimised ADD), never a larger arena than with
`concat_in_place=False`, and the fallbacks (a slice read by another operator, a requantising
producer, a kernel without the stride) keep the copy. Then random branch graphs (Hypothesis)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from concat_graphs import INCEPTION_LIKE, Branch, branchy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcugen.model.ir import Graph
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from support import assert_matches_tflm, without_variants


def planned(graph: Graph, **options: object) -> Generated:
    return generate(graph, options=PlanOptions(**options))  # type: ignore[arg-type]


def sliced(gen: Generated) -> set[str]:
    """The opcodes of the producers planned to write into a concatenation's slice."""
    return {gen.graph.operators[s.producer].opcode for s in gen.plan.channel_slices}


@pytest.mark.parametrize("kernels", ["auto", "opt", "reference"])
def test_branches_write_their_slices_bit_exact(kernels: str) -> None:
    graph = branchy(INCEPTION_LIKE, concats=2)
    on = planned(graph, kernels=kernels)
    off = planned(graph, kernels=kernels, concat_in_place=False)
    assert on.plan.channel_slices, "no concatenation was planned in place"
    assert on.plan.arena_bytes < off.plan.arena_bytes
    assert "CONV_2D" in sliced(on)
    if kernels != "reference":
        assert "ADD" in sliced(on)  # the optimised ADD takes the stride, the reference does not
    strided = {n.index: n.out_stride for n in _nodes(on) if n.out_stride}
    assert set(strided) == {s.producer for s in on.plan.channel_slices}
    assert_matches_tflm(
        write_model(graph), samples=2, generate_fn=lambda g: planned(g, kernels=kernels)
    )


def _nodes(gen: Generated) -> tuple:  # the view model's nodes, with their output strides
    from mcugen.codegen.viewmodel import build_view_model

    return build_view_model(gen.graph, gen.plan, gen.lowered, "m").nodes


def test_rungs_write_their_slices_bit_exact() -> None:
    """With the fast convolutions (and the staged 1x1 rung) removed, the 1x1 layers run
    conv_2d_1x1_s8_direct or _lean and the 3x3 ones conv_2d_s8_col2 (rungs for memory), each at
    the slice's stride."""
    graph = branchy(INCEPTION_LIKE, concats=2, seed=2)
    fast = {"conv_2d_s8", "conv_2d_stem_s8", "conv_2d_1x1_s8", "conv_2d_1x1_s8_staged"}
    with without_variants(fast):
        gen = planned(graph, kernels="opt")
        variants = {gen.lowered[s.producer].variant for s in gen.plan.channel_slices}
        assert "conv_2d_s8_col2" in variants, variants
        assert variants & {"conv_2d_1x1_s8_direct", "conv_2d_1x1_s8_lean"}, variants
        assert_matches_tflm(
            write_model(graph), samples=2, generate_fn=lambda g: planned(g, kernels="opt")
        )


def test_fallbacks_keep_the_copy() -> None:
    """A slice read by another operator, a QUANTIZE's output and a pool's output stay copies."""
    graph = branchy([("1x1", 8), ("requant", 8), ("pool", 8), ("3x3", 8)], shared=(0,))
    gen = planned(graph)
    producers = {s.producer for s in gen.plan.channel_slices}
    for op in graph.operators:
        if op.opcode in ("QUANTIZE", "MAX_POOL_2D"):
            assert op.index not in producers
    concat = next(op for op in graph.operators if op.opcode == "CONCATENATION")
    first = next(op.index for op in graph.operators if concat.inputs[0] in op.outputs)
    assert first not in producers  # read by the ADD too
    assert_matches_tflm(write_model(graph), samples=2)


def test_flag_off_plans_no_slice() -> None:
    gen = planned(branchy(INCEPTION_LIKE), concat_in_place=False)
    assert not gen.plan.channel_slices
    assert all(not n.out_stride for n in _nodes(gen))


KINDS = st.sampled_from(["1x1", "3x3", "sep", "add", "requant", "pool"])


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    branches=st.lists(st.tuples(KINDS, st.integers(1, 12)), min_size=2, max_size=4),
    shared=st.sets(st.integers(0, 3), max_size=2),
    hw=st.integers(3, 9),
    seed=st.integers(0, 1000),
)
def test_random_concat_graphs(branches: list[Branch], shared: set[int], hw: int, seed: int) -> None:
    """Random branches (kernels with and without the stride, quantizations equal or brought
    equal by a QUANTIZE, slices read by others or not): bit-exact with TFLM, and the arena never
    above the plan without concatenation in place."""
    graph = branchy(branches, hw=hw, shared=tuple(sorted(shared)), seed=seed)
    on = planned(graph)
    off: Callable[[], Generated] = lambda: planned(graph, concat_in_place=False)  # noqa: E731
    assert on.plan.arena_bytes <= off().plan.arena_bytes
    assert_matches_tflm(write_model(graph), samples=1)
