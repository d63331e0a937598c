"""Arena buffers and their lifetimes for a given operator order.

Lifetimes follow TFLM's `AllocationInfoBuilder`: step 0 is "before the first operator" (subgraph
inputs are created there), the operator at position k of the order runs at step k + 1, an operator's
outputs are created at its step and its inputs last used there, and subgraph outputs stay live until
the last step. A kernel's scratch buffer lives for its operator's step only.
"""

from __future__ import annotations

import heapq
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
    #: tensors stored in this buffer and their byte offsets in it; () means just `tensor` at 0.
    #: Several entries when tensors alias (views, in-place operators, concatenation slices).
    members: tuple[tuple[int, int], ...] = ()
    #: (first, last, bytes) segments when the bytes in use from the buffer's start change over
    #: its lifetime (a convolution in place growing or shrinking its input's buffer); () means
    #: `size` bytes from `first` to `last`. `size` is the largest extent.
    profile: tuple[tuple[int, int, int], ...] = ()

    def tensor_placements(self) -> tuple[tuple[int, int], ...]:
        if self.members:
            return self.members
        return ((self.tensor, 0),) if self.tensor >= 0 else ()

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last

    def segments(self) -> tuple[tuple[int, int, int], ...]:
        """(first, last, bytes) runs of steps with the bytes in use from the buffer's start."""
        return self.profile or ((self.first, self.last, self.size),)

    def extent_during(self, other: Buffer) -> int:
        """Bytes from this buffer's start in use at some step where `other` uses bytes too: two
        buffers at offsets a and b conflict exactly when a < b + other.extent_during(self) and
        b < a + self.extent_during(other) (both segment profiles start at the buffer's start).
        0 when they never share a step."""
        if not self.overlaps_in_time(other):
            return 0
        if not self.profile and not other.profile:
            return self.size
        return max(
            (
                size
                for first, last, size in self.segments()
                for o_first, o_last, o_size in other.segments()
                if first <= o_last and o_first <= last and o_size > 0
            ),
            default=0,
        )


def tensor_lifetimes(graph: Graph, order: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Tensor -> (first step, last step) for every tensor an operator or the subgraph touches."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for t in graph.inputs:
        first.setdefault(t, 0)
        last[t] = 0
    for step, op_index in enumerate(order, start=1):
        op = graph.operators[op_index]
        for t in op.outputs:
            first.setdefault(t, step)
        for t in (*op.inputs, *op.outputs):
            if t >= 0:
                last[t] = max(last.get(t, step), step)
    end = len(order)
    for t in graph.outputs:
        first.setdefault(t, end)
        last[t] = end
    return {t: (first[t], last[t]) for t in first}


def _alias_root(t: int, aliases: Mapping[int, tuple[int, int]]) -> tuple[int, int]:
    """Follow alias links to the tensor that owns the storage; returns (root, byte offset)."""
    offset = 0
    for _ in range(len(aliases) + 1):
        if t not in aliases:
            return t, offset
        t, inner = aliases[t]
        offset += inner
    raise ValueError("alias cycle")


def group_extent(
    graph: Graph,
    life: Mapping[int, tuple[int, int]],
    members: Sequence[tuple[int, int]],
    profiles: bool,
    spans: Mapping[int, int] | None = None,
) -> tuple[int, int, int, tuple[tuple[int, int, int], ...]]:
    """(size, first, last, profile) of the buffer holding `members` (tensor, offset in it), all
    with bytes and lifetimes. Without `profiles` the buffer is `size` bytes for its lifetime;
    with them, the profile follows the bytes the live members reach at each step, when that
    changes. A member in `spans` (a channel slice, plan/channel_slices.py) reaches that many
    bytes from its offset rather than its own size. O(members log members) with profiles,
    O(members) without."""
    spans = spans or {}
    size = align_up(max(off + spans.get(t, graph.tensors[t].nbytes) for t, off in members))
    first = min(life[t][0] for t, _ in members)
    last = max(life[t][1] for t, _ in members)
    if not profiles or len(members) < 2:
        return size, first, last, ()
    ends = sorted(
        (life[t][0], life[t][1], off + spans.get(t, graph.tensors[t].nbytes)) for t, off in members
    )
    cuts = sorted({f for f, _, _ in ends} | {la + 1 for _, la, _ in ends})
    runs: list[tuple[int, int, int]] = []
    reach: list[tuple[int, int]] = []  # heap of (-extent, last step) of members born so far
    born = 0
    for start, stop in zip(cuts, cuts[1:], strict=False):  # the live members change only at cuts
        while born < len(ends) and ends[born][0] <= start:
            heapq.heappush(reach, (-ends[born][2], ends[born][1]))
            born += 1
        while reach and reach[0][1] < start:
            heapq.heappop(reach)  # the farthest-reaching member died: the next one may be live
        extent = align_up(-reach[0][0] if reach else 0)
        if runs and runs[-1][2] == extent and runs[-1][1] == start - 1:
            runs[-1] = (runs[-1][0], stop - 1, extent)
        elif extent > 0:
            runs.append((start, stop - 1, extent))
    if len(runs) == 1 and runs[0] == (first, last, size):
        return size, first, last, ()
    return size, first, last, tuple(runs)


def activation_buffers(
    graph: Graph,
    order: Sequence[int],
    scratch: Mapping[int, int] | None = None,
    aliases: Mapping[int, tuple[int, int]] | None = None,
    *,
    profiles: bool = False,
    spans: Mapping[int, int] | None = None,
) -> tuple[Buffer, ...]:
    """The buffers to place, in TFLM's id order: tensors by index, then scratch by operator step.

    Sizes are the tensor bytes rounded up to `ARENA_ALIGNMENT`. Zero-byte tensors get no buffer.
    `aliases` maps a tensor to (host tensor, byte offset): it then lives inside the host's buffer,
    whose lifetime and size grow to cover it; with `profiles`, its bytes in use follow its live
    members step by step (`Buffer.profile`); a channel slice in `spans` reaches that many bytes
    from its offset. Complexity O(tensors + operator inputs/outputs),
    plus O(members^2) per shared buffer with `profiles`.
    """
    life = tensor_lifetimes(graph, order)
    groups: dict[int, list[tuple[int, int]]] = {}
    for t in graph.activation_tensors():
        if graph.tensors[t].nbytes == 0 or t not in life:
            continue
        root, offset = _alias_root(t, aliases or {})
        groups.setdefault(root, []).append((t, offset))
    buffers: list[Buffer] = []
    for root in sorted(groups):
        members = groups[root]
        size, first, last, profile = group_extent(graph, life, members, profiles, spans)
        listed = tuple(sorted(members)) if len(members) > 1 else ()
        buffers.append(
            Buffer(
                id=len(buffers),
                size=size,
                first=first,
                last=last,
                tensor=root,
                members=listed,
                profile=profile,
            )
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


def op_working_set_bound(graph: Graph, scratch: Mapping[int, int] | None = None) -> int:
    """A lower bound on the peak of every order: while an operator runs, its inputs, outputs and
    scratch are all live. Max over operators of their aligned sizes. O(operator inputs/outputs)."""
    arena = set(graph.activation_tensors())
    best = sum(align_up(graph.tensors[t].nbytes) for t in graph.inputs if t in arena)
    for op in graph.operators:
        tensors = {t for t in (*op.inputs, *op.outputs) if t in arena}
        total = sum(align_up(graph.tensors[t].nbytes) for t in tensors)
        total += align_up((scratch or {}).get(op.index, 0))
        best = max(best, total)
    outputs = {t for t in graph.outputs if t in arena}
    return max(best, sum(align_up(graph.tensors[t].nbytes) for t in outputs))


def live_bytes_per_step(buffers: Sequence[Buffer], steps: int) -> list[int]:
    """Sum of the sizes of the buffers live at each step 0..steps."""
    live = [0] * (steps + 1)
    for b in buffers:
        for first, last, size in b.segments():
            for s in range(first, last + 1):
                live[s] += size
    return live
