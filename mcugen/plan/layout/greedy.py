"""Greedy-by-size first-fit layout, identical to TFLM's `GreedyMemoryPlanner`.

Steps (Pisarchyk & Lee 2020, "greedy by size"; TFLM greedy_memory_planner.cc):
1. Order the buffers by size, largest first. TFLM lists online buffers from the highest id down and
   bubble-sorts them stably, so equal sizes keep *descending* id order; we reproduce that exactly.
2. Place each buffer at the lowest offset where it fits between the already placed buffers that are
   live at the same time, scanning them in offset order (first fit).
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
    placed: list[tuple[int, int, Buffer]] = []  # (offset, insertion number, buffer), sorted
    offsets: dict[int, int] = {}
    for number, buf in enumerate(by_size):
        candidate = 0
        for offset, _, other in placed:
            if not other.overlaps_in_time(buf):
                continue
            if offset - candidate >= buf.size:
                break
            # TFLM's sizes are already multiples of the alignment; rounding keeps odd sizes legal.
            candidate = max(candidate, align_up(offset + other.size, buf.align))
        offsets[buf.id] = candidate
        placed.append((candidate, number, buf))
        placed.sort(key=lambda e: (e[0], e[1]))
    return offsets
