"""Where a patch stage's end may lie over its input: windowed stores run ahead of windowed loads.

A patch stage (mcugen/model/patch_rewrite.py) reads its whole input only through tile loads, each
a window at a known corner (`OpTraits.reads_window`), and writes its whole end only through tile
stores, each a window at a known corner, one after the other in place (`writes_window`). Tiles
run in row-major order, so the bytes of the input still to be read move forward as the bytes of
the end already written do. The end may therefore start D bytes before the input and run over it,
where D is the smallest distance that keeps every store's bytes below the first byte any later
load reads: the input's dead rows hold the end's first rows (the "overlapping" of input and output
of in-place buffers TinyEngine does for one operator, MCUNet, Lin et al. 2020, applied to a whole
stage). The input then costs only D bytes more than itself while the stage runs, instead of the
whole end: VWW's 27,648-byte image and 9,216-byte stage end (docs/memory-planning.md).

Steps, for every chain of windowed stores (the first has no input 0; each next one overwrites the
last one's output):
1. After store k, the end's bytes written so far reach at most W_k = the running maximum over
   stores <= k of the byte after the window's last pixel (NHWC, row-major).
2. For every tensor X that only windowed loads read (not a graph output), R_k = the first byte of
   X any load after store k reads (the window's top-left pixel); infinite when none does.
3. D = max over k of (W_k - R_k), rounded up to the arena alignment, at least 0; candidates where
   X's last load is at or before the first store, or after the last, are left out.
`plan/aliasing.py` (step 6) lays X at D bytes into the end's buffer when that lowers the peak, and
`check_window_order` re-checks every placement against the offsets a layout gives.
Complexity O(stores x loads) per chain. Weaknesses: the written bytes are counted as a prefix (a
store writes a window, not everything before it), and only one input per stage end is laid over it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcugen.model.ir import Graph, element_size
from mcugen.model.traits import NO_TRAITS, Traits
from mcugen.plan.buffers import align_up, tensor_lifetimes


class WindowOrderViolated(AssertionError):
    """A layout lets a store write bytes a later load still reads: a bug in mcugen."""


@dataclass(frozen=True)
class StageOverlap:
    """The input `tensor` may lie `offset` bytes after the start of `first_part` (the first
    store's output, whose buffer the end's stores share) while `first_part`'s chain runs."""

    tensor: int
    first_part: int
    offset: int


def _pixel_bytes(graph: Graph, t: int) -> tuple[int, int]:
    """(row width in pixels, bytes per pixel) of an NHWC tensor."""
    shape = graph.tensors[t].shape
    return shape[2], shape[3] * element_size(graph.tensors[t].dtype)


def store_chains(graph: Graph, order: Sequence[int], traits: Traits) -> list[list[int]]:
    """Chains of windowed stores (operator indices in `order`): each next store's input 0 is the
    last one's output."""
    chains: list[list[int]] = []
    ends: dict[int, list[int]] = {}  # last output of a chain -> the chain
    for op_index in order:
        op = graph.operators[op_index]
        if traits.get(op_index, NO_TRAITS).writes_window is None or len(op.inputs) != 2:
            continue
        chain = ends.pop(op.inputs[0], None)
        if chain is None:
            if op.inputs[0] >= 0:
                continue
            chain = []
            chains.append(chain)
        chain.append(op_index)
        ends[op.outputs[0]] = chain
    return chains


def written_ends(graph: Graph, stores: Sequence[int], traits: Traits) -> list[int]:
    """W_k of each store of a chain (step 1)."""
    reach, found = 0, []
    for op_index in stores:
        op = graph.operators[op_index]
        corner = traits[op_index].writes_window
        assert corner is not None
        width, pixel = _pixel_bytes(graph, op.outputs[0])
        _, h, w, _ = graph.tensors[op.inputs[1]].shape
        reach = max(reach, ((corner[0] + h - 1) * width + corner[1] + w) * pixel)
        found.append(reach)
    return found


def window_readers(
    graph: Graph, order: Sequence[int], traits: Traits
) -> dict[int, list[tuple[int, int]]]:
    """Tensor -> (step, first byte read) of each windowed load, for tensors that only windowed
    loads read and that are no graph output."""
    loads: dict[int, list[tuple[int, int]]] = {}
    others: set[int] = set(graph.outputs)
    for step, op_index in enumerate(order, start=1):
        op = graph.operators[op_index]
        corner = traits.get(op_index, NO_TRAITS).reads_window
        if corner is None:
            others.update(op.inputs)
            continue
        x = op.inputs[0]
        others.update(op.inputs[1:])
        width, pixel = _pixel_bytes(graph, x)
        loads.setdefault(x, []).append((step, (corner[0] * width + corner[1]) * pixel))
    return {t: reads for t, reads in loads.items() if t not in others}


def stage_overlaps(graph: Graph, order: Sequence[int], traits: Traits) -> list[StageOverlap]:
    """Every (input, end) pair a patch stage's windows allow to overlap, with its offset."""
    steps = {op_index: s for s, op_index in enumerate(order, start=1)}
    readers = window_readers(graph, order, traits)
    found = []
    for stores in store_chains(graph, order, traits):
        store_steps = [steps[i] for i in stores]
        written = written_ends(graph, stores, traits)
        for x, reads in sorted(readers.items()):
            last_read = max(s for s, _ in reads)
            if not store_steps[0] < last_read < store_steps[-1]:
                continue
            need = 0
            for step, reach in zip(store_steps, written, strict=True):
                after = [start for s, start in reads if s > step]
                if after:
                    need = max(need, reach - min(after))
            first_part = graph.operators[stores[0]].outputs[0]
            found.append(StageOverlap(x, first_part, align_up(need)))
    return found


def check_window_order(
    graph: Graph, order: Sequence[int], traits: Traits, offsets: Mapping[int, int]
) -> None:
    """Raise `WindowOrderViolated` when, with tensors at `offsets`, a windowed load reads bytes a
    store of an earlier step has written while the loaded tensor was live (counted as a prefix of
    the end, as step 1 does; a tensor made after the store, as a later stage's input, is not
    concerned)."""
    steps = {op_index: s for s, op_index in enumerate(order, start=1)}
    readers = window_readers(graph, order, traits)
    born = {t: first for t, (first, _) in tensor_lifetimes(graph, order).items()}
    for stores in store_chains(graph, order, traits):
        parts = [graph.operators[i].outputs[0] for i in stores]
        if any(p not in offsets for p in parts):
            continue
        written = written_ends(graph, stores, traits)
        for x, reads in readers.items():
            if x not in offsets:
                continue
            for op_index, reach in zip(stores, written, strict=True):
                start = offsets[graph.operators[op_index].outputs[0]]
                for step, first in reads:
                    if (
                        step > steps[op_index]
                        and born.get(x, 0) < steps[op_index]
                        and offsets[x] + first < start + reach
                        and (start < offsets[x] + graph.tensors[x].nbytes)
                    ):
                        raise WindowOrderViolated(
                            f"a load at step {step} reads tensor {x} at byte {first}, which the "
                            f"store at step {steps[op_index]} has written"
                        )
