"""The memory plan of one graph: operator order, buffers, offsets, and the gap to optimal."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mcugen.model.ir import Graph
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan.buffers import Buffer, live_bytes_per_step


class PlanInvalid(AssertionError):
    """A planner produced an inconsistent plan: a bug in mcugen, not a user error."""


@dataclass(frozen=True)
class MemoryPlan:
    order: tuple[int, ...]
    buffers: tuple[Buffer, ...]
    offsets: Mapping[int, int]  # buffer id -> byte offset
    order_strategy: str
    layout_strategy: str
    plan_seconds: float = 0.0
    order_lower_bound: int = 0  # no order of this graph has a smaller peak (without aliasing)
    order_proven_optimal: bool = False
    note: str = ""

    @property
    def arena_bytes(self) -> int:
        return max((self.offsets[b.id] + b.size for b in self.buffers), default=0)

    @property
    def live_bytes(self) -> list[int]:
        """Live bytes at each step (0 = before the first operator)."""
        return live_bytes_per_step(self.buffers, len(self.order))

    @property
    def lower_bound(self) -> int:
        """Peak live bytes of this order: no layout of these buffers can use less."""
        return max(self.live_bytes, default=0)

    @property
    def peak_step(self) -> int:
        live = self.live_bytes
        return live.index(max(live)) if live else 0

    def tensor_offsets(self) -> dict[int, int]:
        """Tensor -> arena offset, aliased tensors included."""
        return {
            t: self.offsets[b.id] + inner
            for b in self.buffers
            for t, inner in b.tensor_placements()
        }

    def scratch_offsets(self) -> dict[int, int]:
        return {b.scratch_of: self.offsets[b.id] for b in self.buffers if b.scratch_of >= 0}

    def validate(self, graph: Graph) -> None:
        """Raise `PlanInvalid` on a dependency violation, overlap or misalignment."""
        _check_order(graph, self.order)
        for b in self.buffers:
            off = self.offsets.get(b.id)
            if off is None or off < 0 or off % b.align:
                raise PlanInvalid(f"buffer {b.id} has offset {off}, align {b.align}")
        ranked = sorted(self.buffers, key=lambda b: self.offsets[b.id])
        for i, a in enumerate(ranked):
            end = self.offsets[a.id] + a.size
            for b in ranked[i + 1 :]:
                if self.offsets[b.id] >= end:
                    break
                # b starts at or above a: they overlap when b starts below what a reaches at
                # their shared steps (a's size for plain buffers) and b uses bytes there.
                reach = a.extent_during(b)
                if self.offsets[b.id] < self.offsets[a.id] + reach and b.extent_during(a) > 0:
                    raise PlanInvalid(f"buffers {a.id} and {b.id} overlap in space and time")
        self._check_in_place_convolutions(graph)

    def _check_in_place_convolutions(self, graph: Graph) -> None:
        """A convolution whose output shares its input's storage runs in place, which its
        kernel can do only in the cases of aliasing.py step 5 and with the staging scratch."""
        from mcugen.plan.staging import CONV_IN_PLACE, conv_staging_bytes

        offsets = self.tensor_offsets()
        scratch = {b.scratch_of: b.size for b in self.buffers if b.scratch_of >= 0}
        for op in graph.operators:
            if op.opcode not in CONV_IN_PLACE or not op.outputs or not op.inputs:
                continue
            y, x = op.outputs[0], op.inputs[0]
            if y not in offsets or offsets.get(x) != offsets[y]:
                continue
            need = conv_staging_bytes(graph, op)
            if need is None or scratch.get(op.index, 0) < need:
                raise PlanInvalid(f"{op.label} runs in place without a staging scratch of {need}")


def _check_order(graph: Graph, order: tuple[int, ...]) -> None:
    if sorted(order) != list(range(len(graph.operators))):
        raise PlanInvalid(f"order {order} is not a permutation of the operators")
    ready = set(graph.inputs) | {t.index for t in graph.tensors if t.is_constant or t.is_variable}
    for i in order:
        op = graph.operators[i]
        missing = [t for t in op.inputs if t >= 0 and t not in ready]
        if missing:
            raise PlanInvalid(f"{op.label} runs before its inputs {missing} exist")
        ready.update(op.outputs)


def plan_memory(
    graph: Graph,
    *,
    order: str = orders.DEFAULT,
    layout: str = layouts.DEFAULT,
    scratch: Mapping[int, int] | None = None,
    aliases: Mapping[int, tuple[int, int]] | None = None,
    in_place: bool = False,
    time_budget: float | None = None,
    profiles: bool = True,
) -> MemoryPlan:
    """Choose an order and a layout by name, and return the validated plan.

    `order="auto"` runs the joint search (plan/joint.py). `in_place` lets tensors share storage
    (views, element-wise in place, concatenation slices) as the chosen order allows; explicit
    `aliases` override that. `profiles`: a shared buffer occupies, at each step, only the bytes
    its live members reach (`Buffer.profile`; static offsets); off for the dynamic allocators,
    which move whole buffers.
    """
    from mcugen.plan import joint

    if order == joint.AUTO:
        plan = joint.plan_jointly(
            graph,
            layout,
            scratch=scratch,
            in_place=in_place,
            time_budget=time_budget,
            profiles=profiles,
        )
    else:
        plan = joint.plan_one(
            graph,
            order,
            layout,
            scratch=scratch,
            in_place=in_place,
            aliases=aliases,
            order_budget=time_budget,
            layout_budget=time_budget,
            profiles=profiles,
        )
    plan.validate(graph)
    return plan
