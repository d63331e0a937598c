"""Strip-packing layouts: the skyline best-fit heuristic, and greedy by conflicts.

`best_fit` treats the arena as a strip whose width is time and whose height is bytes, each
buffer a rectangle fixed in time that may only move up or down (Burke, Kendall & Whitwell 2004,
"A New Placement Heuristic for the Orthogonal Stock-Cutting Problem", adapted to fixed lifetimes
by Sekiyama et al. 2018, "Profile-guided memory optimization for deep neural networks").
Steps:
1. Keep the skyline: for every step, the top of the buffers placed so far.
2. Take the lowest run of steps of the skyline (the leftmost one on ties).
3. Among the unplaced buffers whose lifetime lies inside that run, place the one living longest
   (ties: larger, then lower id) on the skyline, and raise the skyline over its lifetime.
4. If none fits inside, raise the run to its lower neighbour and go back to 2.
Complexity O(n (T + n)) for n buffers over T steps. Weakness: a raised run is never filled again,
so a short buffer missing the lowest run leaves a hole under everything placed above it.

`greedy_by_conflicts` (TVM USMP's `greedy_by_conflicts`): the buffers that share a step with the
most others go first (ties: larger, then lower id), each at the lowest offset where it fits.
Complexity O(n d log d), d = time conflicts per buffer. Weakness: small buffers with many
conflicts go first and can split the arena for the large ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcugen.plan.buffers import Buffer
from mcugen.plan.layout.placement import align_to, first_fit, place_in_order, time_conflicts


def _lowest_run(heights: dict[int, int]) -> tuple[int, int]:
    """First and last step of the leftmost maximal run of steps at the lowest height."""
    low = min(heights.values())
    steps = sorted(heights)
    first = next(s for s in steps if heights[s] == low)
    last = first
    while last + 1 in heights and heights[last + 1] == low:
        last += 1
    return first, last


def best_fit(buffers: Sequence[Buffer], *, time_budget: float | None = None) -> dict[int, int]:
    """Buffer id -> byte offset by skyline best fit; `time_budget` is ignored."""
    del time_budget
    if not buffers:
        return {}
    heights = {s: 0 for s in range(min(b.first for b in buffers), max(b.last for b in buffers) + 1)}
    unplaced = sorted(buffers, key=lambda b: (b.first - b.last, -b.size, b.id))
    offsets: dict[int, int] = {}
    while unplaced:
        first, last = _lowest_run(heights)
        chosen = next((b for b in unplaced if first <= b.first and b.last <= last), None)
        if chosen is None:
            neighbours = [heights[s] for s in (first - 1, last + 1) if s in heights]
            for s in range(first, last + 1):
                heights[s] = min(neighbours)
            continue
        unplaced.remove(chosen)
        offset = align_to(heights[chosen.first], chosen.align)
        offsets[chosen.id] = offset
        for s in range(chosen.first, chosen.last + 1):
            heights[s] = offset
        for first_step, last_step, size in chosen.segments():
            for s in range(first_step, last_step + 1):
                heights[s] = offset + size
    return offsets


def conflicts_order(buffers: Sequence[Buffer]) -> list[Buffer]:
    """Most time conflicts first, then larger, then lower id."""
    conflicts = time_conflicts(buffers)
    return sorted(buffers, key=lambda b: (-len(conflicts[b.id]), -b.size, b.id))


def greedy_by_conflicts(
    buffers: Sequence[Buffer], *, time_budget: float | None = None
) -> dict[int, int]:
    """Buffer id -> byte offset; `time_budget` is ignored."""
    del time_budget
    return place_in_order(conflicts_order(buffers), first_fit)
