"""Small networks planned with aliasing and rewrites, and random graphs (planners/)."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
from hypothesis import strategies as st

from mcugen.codegen.lower import op_traits
from mcugen.codegen.render import render_model
from mcugen.codegen.viewmodel import build_view_model, lower_all, scratch_sizes
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import Generated, rewritten
from mcugen.plan.aliasing import aliases_for
from mcugen.plan.buffers import activation_buffers
from mcugen.plan.layout.greedy import greedy_by_size
from mcugen.plan.memory_plan import MemoryPlan, plan_memory
from mcugen.plan.order import get_order
from mcugen.plan.persistent import persistent_layout
from mcugen.plan.staging import staging_scratch
from support.op_models import NONE, SAME, window_options

# --- Small networks planned with aliasing and rewrites (planners/) -----------------------------


def generate_optimized(
    graph: Graph,
    *,
    rewrites: bool = True,
    aliasing: bool = True,
    order: str | tuple[int, ...] = "stored",
    kernels: str = "opt",
) -> Generated:
    """As `pipeline.generate`, after `rewrite` and with `aliases_for` (greedy-by-size layout).
    `order` names an order strategy, or gives the order itself (of the graph after rewrites)."""
    g = rewritten(graph) if rewrites else graph
    lowered = lower_all(g, tuple(range(len(g.operators))), kernels=kernels)
    # the chosen kernels' own sharing; no channel slices: the given-order path below lays out
    # buffers without their spans (tests/planners/test_concat_in_place.py covers them)
    traits = op_traits(g, lowered, concat_in_place=False)
    scratch = scratch_sizes(lowered)
    if isinstance(order, str):
        chosen = get_order(order)(g, scratch=scratch).order
        aliases = aliases_for(g, chosen, traits, scratch=scratch) if aliasing else None
        plan = plan_memory(
            g,
            order=order,
            layout="greedy_by_size",
            scratch=scratch,
            aliases=aliases,
            traits=traits,
        )
    else:
        aliases = aliases_for(g, order, traits, scratch=scratch) if aliasing else None
        staged = staging_scratch(g, aliases or {}, scratch, traits)
        buffers = activation_buffers(g, order, staged, aliases)
        plan = MemoryPlan(
            order,
            buffers,
            greedy_by_size(buffers),
            "given",
            "greedy_by_size",
            persistent=persistent_layout(g),
        )
        plan.validate(g, traits)
    vm = build_view_model(g, plan, lowered, "model")
    return Generated(g, plan, lowered, vm, render_model(vm))


def aliased_tensors(plan: MemoryPlan) -> set[int]:
    """The tensors `plan` places inside another tensor's buffer (views, in place, concatenated)."""
    return {t for b in plan.buffers for t, _ in b.members if t != b.tensor}


def arenas(model: bytes, **kwargs: Any) -> tuple[MemoryPlan, MemoryPlan]:
    """(plain plan, optimized plan) of a model, both validated."""
    graph = import_model(model, source="test model")
    kernels = kwargs.get("kernels", "opt")
    plain = generate_optimized(graph, rewrites=False, aliasing=False, kernels=kernels).plan
    return plain, generate_optimized(graph, **kwargs).plan


class Net:
    """A GraphBuilder with int8 or float32 activations and seeded random weights."""

    def __init__(self, dtype: str, seed: int = 0) -> None:
        self.b = GraphBuilder()
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)

    def q(self, scale: float, zero_point: int) -> dict[str, Any]:
        return {"scale": scale, "zero_point": zero_point} if self.dtype == "int8" else {}

    def shape(self, t: int) -> tuple[int, ...]:
        return self.b.tensors[t].shape

    def input(self, shape: Sequence[int], q: tuple[float, int] = (0.05, -3)) -> int:
        return self.b.input(shape, self.dtype, **self.q(*q))

    def act(self, shape: Sequence[int], q: tuple[float, int] = (0.1, 2)) -> int:
        return self.b.activation(shape, self.dtype, **self.q(*q))

    def op(self, opcode: str, inputs: list[int], shape: Sequence[int], **options: Any) -> int:
        q = options.pop("q", (0.1, 2))
        y = self.act(shape, q)
        self.b.op(opcode, inputs, [y], **options)
        return y

    def weights(self, shape: tuple[int, ...], axis: int, in_scale: float) -> tuple[int, int]:
        """(filter, bias) constants with per-channel int8 scales on `axis`, or float32."""
        channels = shape[axis]
        if self.dtype == "float32":
            w = self.b.const((self.rng.standard_normal(shape) * 0.3).astype(np.float32))
            return w, self.b.const(self.rng.standard_normal(channels).astype(np.float32))
        scales = self.rng.uniform(0.002, 0.02, channels)
        data = self.rng.integers(-127, 128, shape, dtype=np.int8)
        w = self.b.const(data, scale=scales, zero_point=0, axis=axis)
        bias = self.rng.integers(-3000, 3000, channels, dtype=np.int32)
        return w, self.b.const(bias, scale=in_scale * scales)

    def conv(self, x: int, out_c: int, kernel: int = 1, stride: int = 1, **kw: Any) -> int:
        n, h, w, c = self.shape(x)
        padding = kw.pop("padding", SAME)
        oh, ow = (_out(d, kernel, stride, padding) for d in (h, w))
        filt, bias = self.weights((out_c, kernel, kernel, c), 0, self._scale(x))
        options = window_options(padding, (stride, stride), (1, 1), kw.pop("act", NONE))
        return self.op("CONV_2D", [x, filt, bias], (n, oh, ow, out_c), **options, **kw)

    def dwconv(self, x: int, kernel: int = 3, stride: int = 1, **kw: Any) -> int:
        n, h, w, c = self.shape(x)
        padding = kw.pop("padding", SAME)
        oh, ow = (_out(d, kernel, stride, padding) for d in (h, w))
        filt, bias = self.weights((1, kernel, kernel, c), 3, self._scale(x))
        options = window_options(padding, (stride, stride), (1, 1), kw.pop("act", NONE))
        return self.op(
            "DEPTHWISE_CONV_2D",
            [x, filt, bias],
            (n, oh, ow, c),
            depth_multiplier=1,
            **options,
            **kw,
        )

    def _scale(self, t: int) -> float:
        q = self.b.tensors[t].quant
        return q.scale if q is not None else 1.0

    def model(self, *outputs: int) -> bytes:
        self.b.output(*outputs)
        return self.b.tflite()


def _out(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + stride - 1) // stride if padding == SAME else (size - kernel) // stride + 1


# --- Random graphs (planners/) -----------------------------------------------------------------


@st.composite
def random_dags(draw: st.DrawFn) -> Graph:
    """Random operator graphs: each operator reads 1-3 earlier tensors and writes 1-2 new ones."""
    n_inputs = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, 5000)) for _ in range(n_inputs)]
    tensors = [Tensor(i, f"in{i}", (s,), "int8") for i, s in enumerate(sizes)]
    ops = []
    for k in range(draw(st.integers(1, 25))):
        reads = draw(
            st.lists(st.integers(0, len(tensors) - 1), min_size=1, max_size=3, unique=True)
        )
        outs = []
        for _ in range(draw(st.integers(1, 2))):
            size = draw(st.integers(0, 5000))
            outs.append(len(tensors))
            tensors.append(Tensor(len(tensors), f"t{len(tensors)}", (size,), "int8"))
        ops.append(Operator(k, "ADD", 1, tuple(reads), tuple(outs), MappingProxyType({})))
    consumed = {t for op in ops for t in op.inputs}
    produced = [t for op in ops for t in op.outputs]
    outputs = tuple(t for t in produced if t not in consumed) or (produced[-1],)
    return Graph(tuple(tensors), tuple(ops), tuple(range(n_inputs)), outputs)


def highest_ready_first(graph: Graph) -> tuple[int, ...]:
    """A topological order far from the stored one: always the ready operator of highest index."""
    ready = set(graph.inputs) | {t.index for t in graph.tensors if t.is_constant}
    left = set(range(len(graph.operators)))
    order: list[int] = []
    while left:
        runnable = [i for i in left if all(t < 0 or t in ready for t in graph.operators[i].inputs)]
        pick = max(runnable)
        order.append(pick)
        left.remove(pick)
        ready.update(graph.operators[pick].outputs)
    return tuple(order)
