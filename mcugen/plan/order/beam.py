"""Beam search over executed-operator sets: an anytime order for pieces too wide to solve exactly.

Steps:
1. Level k holds at most `width` sets of k executed operators of the piece, each with the peak of
   the best path found to it (never counted below the proven lower bound) and its resident bytes.
2. Expand every set by every ready operator (or only by a free one, `ScheduleModel.moves`), keep
   one entry per resulting set (the lowest peak), then the `width` best by (peak, resident bytes,
   set): lowest peak first and, among equal peaks, the fewest bytes held for later.
3. After the last level, follow the predecessors back from the full set.
`widening_beam` runs widths 1, 2, 4, ... while the next run fits in its work budget, and keeps the
best order. Complexity: O(n * width * ready width * degree) per run. Weakness: no optimality claim;
sets dropped early cannot come back (a branch that must start early to finish cheaply is lost when
its first steps look expensive). It is the fallback of `optimal` when the exact search runs out of
budget; beam search over partial schedules is a standard baseline in the scheduling literature
(e.g. HMCOS, Wang et al. 2022, compares against it).
"""

from __future__ import annotations

from mcugen.plan.order.cuts import Piece
from mcugen.plan.order.state import ScheduleModel, iter_bits

#: Widest beam tried (sets kept per level).
MAX_WIDTH = 4096


def beam_order(
    model: ScheduleModel, piece: Piece, *, floor: int, width: int
) -> tuple[tuple[int, ...], int, int]:
    """One beam run of `width` over `piece`: (order, peak, transitions)."""
    ready0 = 0
    for v in iter_bits(piece.ops):
        if model.preds[v] & ~piece.before == 0:
            ready0 |= 1 << v
    level = {piece.before: (floor, piece.resident, ready0)}
    history: list[dict[int, tuple[int, int]]] = []  # per level: set -> (previous set, operator)
    transitions = 0
    for _ in range(piece.size):
        found: dict[int, tuple[int, int, int, int, int]] = {}  # set -> key, resident, ready, ...
        for mask, (key, resident, ready) in level.items():
            for v in model.moves(mask, resident, ready, key):
                transitions += 1
                child = mask | 1 << v
                child_key = max(key, model.step_bytes(mask, resident, v))
                known = found.get(child)
                if known is not None and known[0] <= child_key:
                    continue
                after = known[1] if known else model.after(mask, resident, v)
                child_ready = known[2] if known else model.ready_after(piece.ops, child, ready, v)
                found[child] = (child_key, after, child_ready, mask, v)
        kept = sorted(found.items(), key=lambda item: (item[1][0], item[1][1], item[0]))[:width]
        history.append({mask: (entry[3], entry[4]) for mask, entry in kept})
        level = {mask: entry[:3] for mask, entry in kept}
    order: list[int] = []
    mask = piece.goal
    for parents in reversed(history):
        mask, v = parents[mask]
        order.append(v)
    order.reverse()
    return tuple(order), model.peak(order, piece.before, piece.resident), transitions


def widening_beam(
    model: ScheduleModel, piece: Piece, *, floor: int, transitions: int
) -> tuple[tuple[int, ...], int] | None:
    """Beam runs of doubling width while the next one (about twice the last) fits in
    `transitions`; the best (order, peak) found, or None if not even width 1 ran."""
    best: tuple[tuple[int, ...], int] | None = None
    width, used, last = 1, 0, 0
    while width <= MAX_WIDTH and used + 2 * last <= transitions:
        order, peak, cost = beam_order(model, piece, floor=floor, width=width)
        if best is None or peak < best[1]:
            best = (order, peak)
        if peak <= floor:
            break
        used, last, width = used + cost, cost, width * 2
    return best
