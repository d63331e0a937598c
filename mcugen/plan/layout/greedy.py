"""Greedy-by-size first-fit layout, identical to TFLM's `GreedyMemoryPlanner`.

Steps (Pisarchyk & Lee 2020, "greedy by size"; TFLM greedy_memory_planner.cc):
1. Order the buffers by size, largest first. TFLM lists online buffers from the highest id down and
   bubble-sorts them stably, so equal sizes keep *descending* id order; we reproduce that exactly.
2. Place each buffer at the lowest offset where it fits between the already placed buffers that are
   live at the same time, scanning them in offset order (first fit). Buffers with a profile
   (`Buffer.profile`) conflict by the extents they reach at shared steps.
Complexity O(n^2) for n buffers. Weakness: large long-lived buffers placed first can leave holes
that later small buffers cannot fill, so the arena may exceed the live-bytes lower bound
(VWW: 73,728 B against 55,296 B).
"""

from __future__ import annotations

from collections.abc import Sequence

from mcugen.plan.buffers import Buffer, align_up


def greedy_by_size(
    buffers: Sequence[Buffer], *, time_budget: float | None = None
) -> dict[int, int]:
    """Buffer id -> byte offset; `time_budget` is ignored (the greedy is fast)."""
    del time_budget
    by_size = sorted(buffers, key=lambda b: (-b.size, -b.id))
    placed: list[tuple[int, int, Buffer]] = []  # (offset, insertion number, buffer)
    offsets: dict[int, int] = {}
    for number, buf in enumerate(by_size):
        # What `buf` may not take, from each placed buffer sharing a step with it; in TFLM's scan
        # order (offset, then insertion) for plain buffers, whose `need` is always buf.size.
        spans = []
        for offset, inserted, other in placed:
            need = buf.extent_during(other)
            if need:
                spans.append((offset - need, inserted, offset + other.extent_during(buf)))
        candidate = 0
        for low, _, high in sorted(spans):
            if low >= candidate:
                break
            # TFLM's sizes are already multiples of the alignment; rounding keeps odd sizes legal.
            candidate = max(candidate, align_up(high, buf.align))
        offsets[buf.id] = candidate
        placed.append((candidate, number, buf))
    return offsets
