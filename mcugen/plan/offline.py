"""Plans stock TFLM can use: operators in mcugen's order plus an `OfflineMemoryAllocation` entry.

TFLM's format (tensorflow/lite/micro/docs/memory_management.md, micro_allocation_info.cc):
the model metadata named "OfflineMemoryAllocation" points at a buffer of little-endian int32
`[version, number of subgraphs, n, offset of tensor 0, ..., offset of tensor n-1]`. TFLM ignores
the first two words (we write 0 and 1, as Arm's Vela does) and requires n to equal the number of
tensors. An offset is a byte offset from the start of the arena's head; -1 means "plan online".

How TFLM treats the offsets (greedy_memory_planner.cc, micro_allocator.cc):
- They are used verbatim: TFLM adds no alignment to them and checks no overlap. Sizes are
  rounded up to 16 bytes and the head starts 16-byte aligned, so we keep offsets multiples of 16.
  Offline buffers are placed first; the rest (-1 tensors, kernels' scratch buffers) go first-fit
  into the gaps around them.
- Lifetimes come from the stored operator order (AllocationInfoBuilder): the same step convention
  as `mcugen.plan.buffers`, so a plan made for order `o` is valid for a model stored in order `o`.
- Constants' entries are ignored. A variable with an offset would be moved into the head (TFLM
  supports that); we write -1 for variables so they stay in TFLM's persistent tail, and -1 for
  constants.
- The head is `max(offset + size rounded up to 16)` over all planned buffers.

Stock TFLM kernels are not promised to be safe when an output shares memory with an input, so the
offsets must not alias, except RESHAPE, whose kernel skips the copy when input and output share
their data (reshape_common.cc), allowed by `reshape_views`.

`optimize_model` (what `mcugen optimize` writes) plans for that: tensors, weights and operator
options are unchanged, so outputs are bit-exact, and nothing is rewritten or shared beyond RESHAPE
views. TFLM's kernels request their scratch at run time and TFLM places it online, first fit into
the gaps of the offline plan; the plan therefore reserves, at each operator's step, the scratch
TFLM's kernels will ask for (mcugen/plan/tflm_scratch.py). The offsets of those reservations are
not written: TFLM finds the gaps itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

import numpy as np

from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.model.tflite_write import write_model
from mcugen.plan.buffers import ARENA_ALIGNMENT, align_up, tensor_lifetimes
from mcugen.plan.memory_plan import MemoryPlan, PlanInvalid, plan_memory
from mcugen.plan.tflm_scratch import tflm_scratch_bytes

OFFLINE_METADATA = "OfflineMemoryAllocation"
ONLINE = -1  #: TFLM's kOnlinePlannedBuffer
_HEADER = 3


def encode_offline_allocation(offsets: Sequence[int]) -> bytes:
    """The metadata buffer: int32 little-endian [0 (version), 1 (subgraphs), n, offsets...]."""
    words = [0, 1, len(offsets), *offsets]
    return np.asarray(words, dtype="<i4").tobytes()


def decode_offline_allocation(data: bytes) -> tuple[int, ...]:
    """The per-tensor offsets of an `OfflineMemoryAllocation` buffer (inverse of encode)."""
    if len(data) % 4 or len(data) < 4 * _HEADER:
        raise McugenError(f"{OFFLINE_METADATA} buffer of {len(data)} bytes is malformed")
    words = np.frombuffer(data, dtype="<i4")
    count = int(words[2])
    if count != len(words) - _HEADER:
        raise McugenError(
            f"{OFFLINE_METADATA} announces {count} offsets but holds {len(words) - _HEADER}"
        )
    return tuple(int(w) for w in words[_HEADER:])


def reorder_operators(graph: Graph, order: Sequence[int]) -> Graph:
    """`graph` with its operators stored in `order` (renumbered 0..n-1); tensors unchanged."""
    if sorted(order) != list(range(len(graph.operators))):
        raise PlanInvalid(f"order {tuple(order)} is not a permutation of the operators")
    ops = tuple(replace(graph.operators[old], index=new) for new, old in enumerate(order))
    return replace(graph, operators=ops)


def reshape_view_aliases(graph: Graph) -> dict[int, tuple[int, int]]:
    """Tensor -> (tensor whose memory it shares, 0) for every RESHAPE whose output can be a view
    of its input. Only RESHAPE qualifies for stock TFLM: its kernel skips the copy when input and
    output pointers are equal; SQUEEZE and EXPAND_DIMS always copy."""
    arena = set(graph.activation_tensors())
    aliases: dict[int, tuple[int, int]] = {}
    for op in graph.operators:
        if op.opcode != "RESHAPE" or not op.inputs or len(op.outputs) != 1:
            continue
        src, dst = op.inputs[0], op.outputs[0]
        same_size = graph.tensors[src].nbytes == graph.tensors[dst].nbytes
        if src in arena and dst in arena and same_size:
            aliases[dst] = (src, 0)
    return aliases


def offline_offsets(graph: Graph, plan: MemoryPlan) -> tuple[int, ...]:
    """One entry per tensor of `graph`: the plan's arena offset, or -1 (constants, variables,
    zero-byte tensors, tensors no operator touches). Scratch buffers are not part of the table:
    TFLM plans its kernels' scratch online around these offsets."""
    placed = plan.tensor_offsets()
    arena = set(graph.activation_tensors())
    return tuple(
        placed[t.index] if t.index in placed and t.index in arena else ONLINE for t in graph.tensors
    )


def with_offline_plan(graph: Graph, plan: MemoryPlan, *, reshape_views: bool = False) -> Graph:
    """`graph` stored in `plan.order` with the plan's offsets as TFLM offline metadata.

    Raises `PlanInvalid` if the offsets, under the lifetimes TFLM derives from the new stored
    order, overlap (other than RESHAPE views when `reshape_views`) or break the alignment."""
    ordered = reorder_operators(graph, plan.order)
    offsets = offline_offsets(graph, plan)
    check_offline_offsets(ordered, offsets, reshape_views=reshape_views)
    metadata = {k: v for k, v in graph.metadata.items() if k != OFFLINE_METADATA}
    metadata[OFFLINE_METADATA] = encode_offline_allocation(offsets)
    return replace(ordered, metadata=MappingProxyType(metadata), sha256="")


def optimize_model(
    graph: Graph,
    *,
    order: str,
    layout: str,
    reshape_views: bool = False,
    time_budget: float | None = None,
) -> tuple[bytes, MemoryPlan]:
    """The .tflite bytes of `graph` in the planned order with offline offsets, and the plan.
    Nothing shares storage (stock TFLM kernels are not alias-safe) except RESHAPE views when
    `reshape_views`; no rewrite is applied, so tensors and weights are those of `graph`."""
    aliases = reshape_view_aliases(graph) if reshape_views else None
    plan = plan_memory(
        graph,
        order=order,
        layout=layout,
        scratch=tflm_scratch_bytes(graph),
        aliases=aliases,
        time_budget=time_budget,
    )
    rewritten = with_offline_plan(graph, plan, reshape_views=reshape_views)
    return write_model(rewritten, description="mcugen optimize: offline memory plan"), plan


def check_offline_offsets(
    graph: Graph, offsets: Sequence[int], *, reshape_views: bool = False
) -> None:
    """Check offsets as TFLM will use them for `graph` in its stored order: every arena tensor
    has an aligned offset, and no two tensors live at the same step share bytes (RESHAPE views
    excepted when allowed). O(t log t + overlapping pairs) for t arena tensors."""
    if len(offsets) != len(graph.tensors):
        raise PlanInvalid(f"{len(offsets)} offsets for {len(graph.tensors)} tensors")
    life = tensor_lifetimes(graph, range(len(graph.operators)))
    views = _view_groups(graph) if reshape_views else {}
    spans = []
    for t in graph.activation_tensors():
        size = align_up(graph.tensors[t].nbytes)
        if size == 0 or t not in life:
            continue
        off = offsets[t]
        if off < 0 or off % ARENA_ALIGNMENT:
            raise PlanInvalid(f"tensor {t} has offset {off}, expected a multiple of 16")
        spans.append((off, off + size, t))
    spans.sort()
    for i, (_, end, a) in enumerate(spans):
        for other_start, _, b in spans[i + 1 :]:
            if other_start >= end:
                break
            if not _disjoint_in_time(life[a], life[b]) and not _same_view(a, b, offsets, views):
                raise PlanInvalid(f"tensors {a} and {b} overlap in the arena while both live")


def _disjoint_in_time(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[1] < b[0] or b[1] < a[0]


def _same_view(a: int, b: int, offsets: Sequence[int], views: Mapping[int, int]) -> bool:
    return a in views and views.get(a) == views.get(b) and offsets[a] == offsets[b]


def _view_groups(graph: Graph) -> dict[int, int]:
    """Tensor -> the root of its chain of RESHAPE views (tensors holding identical bytes)."""
    parent = {dst: src for dst, (src, _) in reshape_view_aliases(graph).items()}

    def root(t: int) -> int:
        for _ in range(len(parent) + 1):
            if t not in parent:
                return t
            t = parent[t]
        raise PlanInvalid("reshape view cycle")

    members = set(parent) | {src for src in parent.values()}
    return {t: root(t) for t in members}
