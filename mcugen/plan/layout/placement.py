"""The skeleton shared by the layout strategies: the live-bytes lower bound, the gaps a buffer may
go into, and placement of buffers one after the other in a given order.

An order-based layout differs from another only in its order key and in its fit rule: *first fit*
takes the lowest gap that holds the buffer, *best fit* the gap that wastes the fewest bytes
(Pisarchyk & Lee 2020, "Efficient Memory Management for Deep Neural Net Inference", section 5).
Any valid layout is reproduced or improved by first fit in increasing order of its offsets, so
searching over placement orders loses nothing (see `order_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from mcugen.plan.buffers import Buffer

#: Offsets the buffer being placed may not take, one open interval (low, high) per placed buffer
#: it shares a step with, sorted: a buffer `b` at offset o forbids (o - need, o + reach) where
#: need = new.extent_during(b) and reach = b.extent_during(new) (plain buffers: their sizes).
Intervals = list[tuple[int, int]]
FitRule = Callable[[Buffer, Intervals], int]


@dataclass(frozen=True)
class LayoutResult:
    """What every layout strategy returns: the offsets, and how far from optimal they are."""

    offsets: Mapping[int, int]  # buffer id -> byte offset
    arena: int
    lower_bound: int  # no layout of these buffers is smaller
    proven_optimal: bool
    strategy: str  # the strategy whose layout this is (auto: the one it kept)
    tried: tuple[tuple[str, int], ...] = ()  # auto: (strategy, arena) in the order they ran
    note: str = ""  # what the report should say (a search stopped by the wall clock)

    @classmethod
    def of(
        cls,
        strategy: str,
        buffers: Sequence[Buffer],
        offsets: Mapping[int, int],
        lower_bound: int | None = None,
    ) -> LayoutResult:
        """A result for `offsets`, proven optimal when the arena meets the bound (by default the
        live-bytes lower bound)."""
        arena = arena_of(buffers, offsets)
        bound = live_lower_bound(buffers) if lower_bound is None else lower_bound
        return cls(MappingProxyType(dict(offsets)), arena, bound, arena <= bound, strategy)


def align_to(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def live_lower_bound(buffers: Sequence[Buffer]) -> int:
    """Peak over steps of the summed sizes of the buffers live at that step: no layout is smaller.

    A sweep over lifetime events, O(n log n) for n buffers.
    """
    segments = [seg for b in buffers for seg in b.segments()]
    events = sorted(
        [(first, size) for first, _, size in segments]
        + [(last + 1, -size) for _, last, size in segments],
        key=lambda e: (e[0], e[1]),
    )
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak


def arena_of(buffers: Sequence[Buffer], offsets: Mapping[int, int]) -> int:
    """Bytes from the arena start to the end of the highest buffer."""
    return max((offsets[b.id] + b.size for b in buffers), default=0)


def time_conflicts(buffers: Sequence[Buffer]) -> dict[int, tuple[Buffer, ...]]:
    """Buffer id -> the other buffers live at one of its steps. O(n log n + conflicting pairs)."""
    by_first = sorted(buffers, key=lambda b: (b.first, b.id))
    found: dict[int, list[Buffer]] = {b.id: [] for b in buffers}
    for i, a in enumerate(by_first):
        for b in by_first[i + 1 :]:
            if b.first > a.last:
                break
            found[a.id].append(b)
            found[b.id].append(a)
    return {k: tuple(sorted(v, key=lambda b: b.id)) for k, v in found.items()}


def forbidden(buf: Buffer, placed: Sequence[tuple[Buffer, int]]) -> Intervals:
    """The sorted `Intervals` of offsets `buf` may not take among `placed` (buffer, offset)."""
    spans = []
    for other, offset in placed:
        need = buf.extent_during(other)
        if need:
            spans.append((offset - need, offset + other.extent_during(buf)))
    return sorted(spans)


def first_fit(buf: Buffer, placed: Intervals) -> int:
    """Lowest aligned offset where `buf` fits below, between or above the placed buffers."""
    candidate = 0
    for low, high in placed:
        if low >= candidate:
            break
        candidate = max(candidate, align_to(high, buf.align))
    return candidate


def best_fit(buf: Buffer, placed: Intervals) -> int:
    """The gap that holds `buf` with the least room to spare (lowest on ties); else the top."""
    candidate = 0
    best: tuple[int, int] | None = None
    for low, high in placed:
        spare = low - candidate
        if spare >= 0 and (best is None or spare < best[0]):
            best = (spare, candidate)
        candidate = max(candidate, align_to(high, buf.align))
    return candidate if best is None else best[1]


def place_in_order(
    ordered: Sequence[Buffer],
    fit: FitRule = first_fit,
    conflicts: Mapping[int, tuple[Buffer, ...]] | None = None,
) -> dict[int, int]:
    """Place the buffers one by one in the given order, each by `fit` among the placed ones it
    shares a step with. O(sum over buffers of d log d), d = number of time conflicts."""
    conflicts = time_conflicts(ordered) if conflicts is None else conflicts
    offsets: dict[int, int] = {}
    for buf in ordered:
        placed = [(c, offsets[c.id]) for c in conflicts[buf.id] if c.id in offsets]
        offsets[buf.id] = fit(buf, forbidden(buf, placed))
    return offsets


def order_of(buffers: Sequence[Buffer], offsets: Mapping[int, int]) -> list[Buffer]:
    """The buffers by increasing offset (then first step, id). First fit in this order gives every
    buffer an offset at most its offset in `offsets`: an earlier buffer sharing a step ends at or
    below the later one's old offset, so that offset is always still free."""
    return sorted(buffers, key=lambda b: (offsets[b.id], b.first, b.id))


def overlapping_pair(
    buffers: Sequence[Buffer], offsets: Mapping[int, int]
) -> tuple[Buffer, Buffer] | None:
    """Two buffers that share a step and a byte, or None. Zero-byte buffers overlap nothing."""
    conflicts = time_conflicts(buffers)
    for a in buffers:
        for b in conflicts[a.id]:
            if b.id > a.id and a.extent_during(b) and b.extent_during(a):
                lo_a, lo_b = offsets[a.id], offsets[b.id]
                if lo_a < lo_b + b.extent_during(a) and lo_b < lo_a + a.extent_during(b):
                    return a, b
    return None
