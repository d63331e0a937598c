"""The `planned` allocator: new buffers into existing holes (largest first, best fit, at a static
layout's offset when free); when none fits, the cheaper partial compaction (slide down above a
point, or up below one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcugen.plan.buffers import Buffer
from mcugen.plan.dynamic import ALLOCATORS, Allocator, Move
from mcugen.plan.dynamic.compacting import compact_down, compact_up


def planned_step(
    bufs: Sequence[Buffer],
    offsets: dict[int, int],
    new: list[int],
    arena: int,
    births: list[int],
    preferred: Mapping[int, int],
) -> list[Move]:
    """Place `new` (writing `births`) with the fewest moved bytes; returns the moves, in order."""
    if not new:
        return []
    fitted = fit_preferred(bufs, offsets, new, arena, preferred)
    if fitted is not None:
        for b, o in fitted.items():
            births[b] = o
        return []
    need = sum(bufs[b].size for b in new)
    best: tuple[int, int, list[Move], int] | None = None
    n = len(offsets)
    for keep in range(n + 1):
        for rank, direction in ((0, "down"), (1, "up")):
            if direction == "down":
                moves = compact_down(bufs, offsets, keep)
                moved = {**offsets, **{m.buffer: m.dst for m in moves}}
                start = max((o + bufs[b].size for b, o in moved.items()), default=0)
                fits = arena - start >= need
            else:
                moves = compact_up(bufs, offsets, keep, arena)
                moved = {**offsets, **{m.buffer: m.dst for m in moves}}
                start = 0
                fits = min(moved.values(), default=arena) >= need
            if not fits:
                continue
            cost = sum(bufs[m.buffer].size for m in moves)
            if best is None or (cost, rank) < (best[0], best[1]):
                best = (cost, rank, moves, start)
    assert best is not None, "full compaction always fits: the arena is the peak live bytes"
    _, _, moves, cursor = best
    for b in new:
        births[b], cursor = cursor, cursor + bufs[b].size
    return moves


def fit_preferred(
    bufs: Sequence[Buffer],
    offsets: dict[int, int],
    new: list[int],
    arena: int,
    preferred: Mapping[int, int],
) -> dict[int, int] | None:
    """Each new buffer at its preferred offset when free there, the others best fit into the free
    gaps, largest first; None when one does not fit."""
    taken = [(o, o + bufs[b].size) for b, o in offsets.items()]
    placed: dict[int, int] = {}
    rest = []
    for b in sorted(new, key=lambda x: (-bufs[x].size, x)):
        want = preferred.get(b)
        if want is None or _clashes(want, want + bufs[b].size, taken, arena):
            rest.append(b)
            continue
        end = want + bufs[b].size
        placed[b] = want
        taken.append((want, end))
    for b in rest:
        spans = sorted(taken)
        gaps = []
        cursor = 0
        for start, end in spans:
            if start > cursor:
                gaps.append((start - cursor, cursor))
            cursor = max(cursor, end)
        gaps.append((arena - cursor, cursor))
        fitting = [(size, start) for size, start in gaps if size >= bufs[b].size]
        if not fitting:
            return None
        _, start = min(fitting)
        placed[b] = start
        taken.append((start, start + bufs[b].size))
    return placed


def _clashes(start: int, end: int, taken: list[tuple[int, int]], arena: int) -> bool:
    return end > arena or any(s < end and start < e for s, e in taken)


ALLOCATORS.add(Allocator.PLANNED, planned_step)
