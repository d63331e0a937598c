"""The `compacting` allocator (Liberis & Lane 2019): new buffers on top of the live region;
after each operator the live buffers slide down, lowest address first. `compact_down` and
`compact_up` are the slides `planned` also uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcugen.plan.buffers import Buffer
from mcugen.plan.dynamic import ALLOCATORS, Allocator, Move


def by_address(offsets: dict[int, int]) -> list[int]:
    return sorted(offsets, key=lambda b: (offsets[b], b))


def compact_down(bufs: Sequence[Buffer], offsets: dict[int, int], keep: int) -> list[Move]:
    """Keep the `keep` lowest buffers, slide the rest down after them, lowest first."""
    ranked = by_address(offsets)
    cursor = offsets[ranked[keep - 1]] + bufs[ranked[keep - 1]].size if keep else 0
    moves = []
    for b in ranked[keep:]:
        if offsets[b] != cursor:
            moves.append(Move(b, cursor))
        cursor += bufs[b].size
    return moves


def compact_up(
    bufs: Sequence[Buffer], offsets: dict[int, int], keep: int, arena: int
) -> list[Move]:
    """Keep the `keep` highest buffers, slide the rest up below them, highest first."""
    ranked = by_address(offsets)
    split = len(ranked) - keep
    cursor = offsets[ranked[split]] if keep else arena
    moves = []
    for b in reversed(ranked[:split]):
        cursor -= bufs[b].size
        if offsets[b] != cursor:
            moves.append(Move(b, cursor))
    return moves


def compacting_step(
    bufs: Sequence[Buffer],
    offsets: dict[int, int],
    new: list[int],
    arena: int,
    births: list[int],
    preferred: Mapping[int, int],
) -> list[Move]:
    """Compacting: slide every live buffer down, lowest first; new buffers go on top."""
    step_moves = compact_down(bufs, offsets, 0)
    top = sum(bufs[b].size for b in offsets)
    for b in new:
        births[b], top = top, top + bufs[b].size
    return step_moves


ALLOCATORS.add(Allocator.COMPACTING, compacting_step)
