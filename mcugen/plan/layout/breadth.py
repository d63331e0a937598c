"""Greedy by breadth (Pisarchyk & Lee 2020, "Efficient Memory Management for Deep Neural Net
Inference", section 5.2).

Steps:
1. The breadth of a step is the summed size of the buffers live at it.
2. Visit the steps from the broadest down (ties: earlier step first).
3. At each step, take its buffers not yet placed, largest first (ties: earlier first step, then
   lower id), and put each into the gap between the placed buffers it shares a step with that
   wastes the fewest bytes (best fit); if no gap holds it, on top of them.
Complexity O(T n + n d log d) for T steps, n buffers, d time conflicts per buffer.
Weakness: the broadest step is packed tightly, but buffers reaching into it from narrower steps
are fixed before those steps are seen, which can leave holes there; like every greedy it does not
reconsider a placement.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcugen.plan.buffers import Buffer
from mcugen.plan.layout.placement import best_fit, place_in_order


def breadth_order(buffers: Sequence[Buffer]) -> list[Buffer]:
    """The buffers in greedy-by-breadth placement order."""
    if not buffers:
        return []
    start = min(b.first for b in buffers)
    end = max(b.last for b in buffers)
    live: dict[int, list[Buffer]] = {s: [] for s in range(start, end + 1)}
    for b in buffers:
        for s in range(b.first, b.last + 1):
            live[s].append(b)
    breadth = {s: sum(b.size for b in bs) for s, bs in live.items()}
    seen: set[int] = set()
    ordered: list[Buffer] = []
    for step in sorted(live, key=lambda s: (-breadth[s], s)):
        fresh = [b for b in live[step] if b.id not in seen]
        for b in sorted(fresh, key=lambda b: (-b.size, b.first, b.id)):
            seen.add(b.id)
            ordered.append(b)
    return ordered


def greedy_by_breadth(
    buffers: Sequence[Buffer], *, time_budget: float | None = None
) -> dict[int, int]:
    """Buffer id -> byte offset; `time_budget` is ignored (the greedy is fast)."""
    del time_budget
    return place_in_order(breadth_order(buffers), best_fit)
