"""Channel concatenation in place (issue 34 item 2, plan/channel_slices.py): producers whose
kernel takes an output pixel stride write straight into their slice of a concatenation along the
channels. Bit-exact with TFLM on the host build for each kernel that takes the stride (reference
and optimised 1x1 and general convolutions, the optimised ADD), never a larger arena than with
`concat_in_place=False`, and the fallbacks (a slice read by another operator, a requantising
producer, a kernel without the stride) keep the copy. Then random branch graphs (Hypothesis)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcugen.model.ir import Graph
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from support import assert_matches_tflm
from testgraphs.net import Quant, _Net

#: a branch: (kind, output channels); kinds: "1x1", "3x3", "add" (ADD of a 1x1 and a 3x3),
#: "sep" (depthwise 3x3 then 1x1), "requant" (a 1x1 whose output a QUANTIZE brings to the
#: concatenation's parameters), "pool" (max pool: no stride in its kernel)
Branch = tuple[str, int]


def branchy(
    branches: list[Branch],
    *,
    hw: int = 8,
    in_c: int = 8,
    shared: tuple[int, ...] = (),
    seed: int = 0,
    concats: int = 1,
) -> Graph:
    """An image, a stem convolution, then `concats` blocks of `branches` concatenated along the
    channels, each block's output through a 1x1 convolution; a branch whose index is in `shared`
    is also read by an ADD after the block (so its concatenation must copy it)."""
    net = _Net(seed, "concat_in_place")
    x = net.conv(net.image(hw, 3), in_c, 3, relu=True)
    for _ in range(concats):
        q: Quant = net.new_quant(0.05)
        outs = [_branch(net, x, kind, c, q) for kind, c in branches]
        y = net.concat(outs)
        x = net.conv(y, in_c, 1, relu=True)
        for k in shared:
            if k < len(outs):
                side = net.conv(outs[k], in_c, 1, quant=net.quant(x))
                x = net.add(x, side)
    return net.finish(x)


def _branch(net: _Net, x: int, kind: str, c: int, q: Quant) -> int:
    if kind == "1x1":
        return net.conv(x, c, 1, quant=q)
    if kind == "3x3":
        return net.conv(x, c, 3, quant=q)
    if kind == "sep":
        return net.conv(net.conv(x, 0, 3, depthwise=True), c, 1, quant=q)
    if kind == "add":
        return net.add(net.conv(x, c, 1), net.conv(x, c, 3), q)
    if kind == "pool":
        return net.pool(net.conv(x, c, 1, quant=q), "max")
    assert kind == "requant"
    y = net.conv(x, c, 1)
    z = net.b.activation(net.shape(y), "int8", scale=q[0], zero_point=q[1])
    net.b.op("QUANTIZE", [y], [z])
    return z


def planned(graph: Graph, **options: object) -> Generated:
    return generate(graph, options=PlanOptions(**options))  # type: ignore[arg-type]


def sliced(gen: Generated) -> set[str]:
    """The opcodes of the producers planned to write into a concatenation's slice."""
    return {gen.graph.operators[s.producer].opcode for s in gen.plan.channel_slices}


INCEPTION_LIKE: list[Branch] = [("1x1", 8), ("3x3", 12), ("sep", 6), ("add", 10)]


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
