"""Arena buffers and their lifetimes for a given operator order.

Lifetimes follow TFLM's `AllocationInfoBuilder`: step 0 is "before the first operator" (subgraph
inputs are created there), the operator at position k of the order runs at step k + 1, an operator's
outputs are created at its step and its inputs last used there, and subgraph outputs stay live until
the last step. A kernel's scratch buffer lives for its operator's step only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcugen.model.ir import Graph

#: TFLM's MicroArenaBufferAlignment(): every arena buffer starts on and is rounded up to 16 bytes.
ARENA_ALIGNMENT = 16


def align_up(n: int, align: int = ARENA_ALIGNMENT) -> int:
    return (n + align - 1) // align * align


@dataclass(frozen=True)
class Buffer:
    """One block of the arena: a tensor (`tensor` >= 0) or an operator's scratch (`scratch_of`)."""

    id: int
    size: int
    first: int
    last: int
    tensor: int = -1
    scratch_of: int = -1
    align: int = ARENA_ALIGNMENT

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last


def activation_buffers(
    graph: Graph,
    order: Sequence[int],
    scratch: Mapping[int, int] | None = None,
) -> tuple[Buffer, ...]:
    """The buffers to place, in TFLM's id order: tensors by index, then scratch by operator step.

    Sizes are the tensor bytes rounded up to `ARENA_ALIGNMENT`. Zero-byte tensors get no buffer.
    Complexity O(tensors + operator inputs/outputs).
    """
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for t in graph.inputs:
        first.setdefault(t, 0)
        last[t] = 0
    for step, op_index in enumerate(order, start=1):
        op = graph.operators[op_index]
        for t in op.outputs:
            first.setdefault(t, step)
        for t in op.inputs:
            if t >= 0:
                last[t] = max(last.get(t, step), step)
        for t in op.outputs:
            last[t] = max(last.get(t, step), step)
    end = len(order)
    for t in graph.outputs:
        first.setdefault(t, end)
        last[t] = end
    buffers: list[Buffer] = []
    for t in graph.activation_tensors():
        size = graph.tensors[t].nbytes
        if size == 0 or t not in first:
            continue
        buffers.append(
            Buffer(id=len(buffers), size=align_up(size), first=first[t], last=last[t], tensor=t)
        )
    for step, op_index in enumerate(order, start=1):
        nbytes = (scratch or {}).get(op_index, 0)
        if nbytes > 0:
            buffers.append(
                Buffer(
                    id=len(buffers),
                    size=align_up(nbytes),
                    first=step,
                    last=step,
                    scratch_of=op_index,
                )
            )
    return tuple(buffers)


def live_bytes_per_step(buffers: Sequence[Buffer], steps: int) -> list[int]:
    """Sum of the sizes of the buffers live at each step 0..steps."""
    live = [0] * (steps + 1)
    for b in buffers:
        for s in range(b.first, b.last + 1):
            live[s] += b.size
    return live
