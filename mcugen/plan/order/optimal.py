"""Optimal operator order: the minimum peak live bytes over all topological orders.

Steps (SERENITY, Ahn et al. 2020, "Ordering Chaos": dynamic programming over partial schedules
memoised by their signature, the set of executed operators, with an adaptive soft budget;
Liberis & Lane 2019 for the same DP on MCUs):
1. Split the graph at cut points (`cuts.py`) and take the greedy order of each piece
   (`greedy.py`): its peak is an upper bound, the operators' working sets a lower bound.
2. Pieces whose greedy peak does not exceed the best proven lower bound cannot lower the overall
   peak and keep their greedy order. The others are searched, highest greedy peak first.
3. Search of one piece: states are executed-operator sets (bitsets in Python ints). The bytes live
   while the next operator runs depend only on the set (`state.py`), so a state's future does not
   depend on how it was reached and one entry per set suffices (memoisation). A state's key is the
   peak of the best path to it, never below the proven lower bound. States are expanded lowest key
   first, deepest first on ties (a depth-first dive while the budget holds). This is SERENITY's
   adaptive budget with the budget raised each time to the next observed infeasible value, without
   re-exploring: states over the budget stay in the queue until the budget reaches them. Transitions
   whose peak reaches the greedy peak are pruned (they cannot improve on it), and when a ready
   operator is free (frees at least what it keeps, within the budget) it is the only move tried.
4. The first time the last state of the piece is popped, its key is the piece's optimum. If the
   queue empties, the greedy order was optimal. If half of the piece's work budget runs out
   first, the popped key is a proven lower bound, and the piece keeps the best of its greedy
   order, greedy completions of the deepest state reached, and a widening beam search
   (`beam.py`) run with the other half.
Complexity: O(states * width * degree); states are the order ideals (downsets) of the piece whose
best peak is below its optimum: linear in the length of chains, exponential in width.
Weakness: wide irregular graphs (RandWire with hundreds of operators between cut points) have too
many states; the search then stops at its budget, reports the lower bound it proved and says so.
HMCOS (Wang et al. 2022) decomposes hierarchically to go further.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mcugen import progress
from mcugen.model.ir import Graph
from mcugen.plan.order import ORDERS, ArenaOf, OrderResult
from mcugen.plan.order.beam import widening_beam
from mcugen.plan.order.cuts import Piece, split_into_pieces
from mcugen.plan.order.greedy import RULES, best_heuristic_order, complete_greedily
from mcugen.plan.order.state import ScheduleModel, build_model, iter_bits

#: Seconds of search when the caller gives no budget: 0.5 since the default pipeline runs two
#: searches (the fastest kernels' and the reference kernels') and should plan 300 operators in under
#: a second; on the 12 generated graphs it gave the same arenas as 1.0 (nas_cells6_c16 256 B less).
DEFAULT_TIME_BUDGET = 0.5
#: State transitions evaluated per second of budget (about half of what one core does unloaded):
#: the budget is spent as a fixed amount of work, never read from a clock, so the same graph and
#: budget give the same order on any machine and under any load (a slow or loaded machine only
#: takes longer).
TRANSITIONS_PER_SECOND = 300_000
#: Transitions between two updates of the progress line (mcugen/progress.py).
NOTE_EVERY = 20_000


@dataclass(frozen=True)
class PieceOutcome:
    order: tuple[int, ...]
    peak: int
    lower: int  # proven: max(optimum of the piece, floor) >= lower
    complete: bool  # False when the work budget ran out
    transitions: int


@dataclass
class _Limits:
    transitions: int
    step: progress.Step | None = None  # told how far the search is, every NOTE_EVERY transitions
    noted: int = 0

    def exceeded(self, used: int) -> bool:
        if self.step is not None and used >= self.noted + NOTE_EVERY:
            self.noted = used
            self.step.update(f"{used:,} of {self.transitions:,} transitions")
        return used >= self.transitions


def search_piece(
    model: ScheduleModel,
    piece: Piece,
    *,
    floor: int,
    greedy: tuple[tuple[int, ...], int],
    limits: _Limits,
) -> PieceOutcome:
    """Best-first search over executed-operator sets of one piece (steps 3-4 of the module)."""
    greedy_order, upper = greedy
    start, goal = piece.before, piece.goal
    key0 = max(floor, piece.lower_bound(model))
    if key0 >= upper:
        return PieceOutcome(greedy_order, upper, key0, True, 0)
    best: dict[int, tuple[int, int, int]] = {start: (key0, -1, -1)}  # set -> key, previous, op
    expanded: dict[int, tuple[int, int]] = {}  # set -> resident bytes, ready operators
    heap = [(key0, 0, 0, start)]
    transitions = pushes = 0
    deepest = (0, start)
    step_base = [born + scratch for born, scratch in zip(model.born, model.scratch, strict=True)]
    while heap:
        key, neg_depth, _, mask = heapq.heappop(heap)
        if mask in expanded:
            continue
        resident, ready = _arrive(model, piece, best, expanded, mask)
        if mask == goal:
            order = _path(best, start, goal)
            return PieceOutcome(
                order, model.peak(order, start, piece.resident), key, True, transitions
            )
        if limits.exceeded(transitions):
            completed = _best_completion(model, piece, best, expanded, deepest[1], greedy)
            return PieceOutcome(*completed, key, False, transitions)
        deepest = max(deepest, (-neg_depth, mask))
        for v in model.moves(mask, resident, ready, key):
            transitions += 1
            child = mask | 1 << v
            step = resident + step_base[v] + (model.end_extra if child == model.full else 0)
            child_key = key if key >= step else step
            known = best.get(child)
            if child_key >= upper or (known is not None and known[0] <= child_key):
                continue
            best[child] = (child_key, mask, v)
            pushes += 1
            heapq.heappush(heap, (child_key, neg_depth - 1, pushes, child))
    return PieceOutcome(greedy_order, upper, upper, True, transitions)


def _arrive(
    model: ScheduleModel,
    piece: Piece,
    best: Mapping[int, tuple[int, int, int]],
    expanded: dict[int, tuple[int, int]],
    mask: int,
) -> tuple[int, int]:
    """Resident bytes and ready operators of a popped set, from those of its best predecessor."""
    if mask == piece.before:
        ready = _mask_of(v for v in iter_bits(piece.ops) if model.preds[v] & ~mask == 0)
        state = (piece.resident, ready)
    else:
        _, previous, op = best[mask]
        resident, ready = expanded[previous]
        state = (model.after(previous, resident, op), model.ready_after(piece.ops, mask, ready, op))
    expanded[mask] = state
    return state


def _mask_of(ops: Iterable[int]) -> int:
    mask = 0
    for v in ops:
        mask |= 1 << v
    return mask


def _path(best: Mapping[int, tuple[int, int, int]], start: int, end: int) -> tuple[int, ...]:
    """The operators run from `start` to `end`, following the recorded best predecessors."""
    order: list[int] = []
    mask = end
    while mask != start:
        _, previous, op = best[mask]
        order.append(op)
        mask = previous
    return tuple(reversed(order))


def _best_completion(
    model: ScheduleModel,
    piece: Piece,
    best: Mapping[int, tuple[int, int, int]],
    expanded: Mapping[int, tuple[int, int]],
    deepest: int,
    greedy: tuple[tuple[int, ...], int],
) -> tuple[tuple[int, ...], int]:
    """The greedy order, or a greedy completion of the deepest state reached if that is better."""
    chosen = greedy
    prefix = _path(best, piece.before, deepest)
    for rule in RULES:
        order = prefix + complete_greedily(model, deepest, piece.goal, rule, expanded[deepest][0])
        peak = model.peak(order, piece.before, piece.resident)
        if peak < chosen[1]:
            chosen = (order, peak)
    return chosen


def solve_piece(
    model: ScheduleModel,
    piece: Piece,
    *,
    floor: int,
    greedy: tuple[tuple[int, ...], int],
    transitions: int,
    step: progress.Step | None = None,
) -> tuple[PieceOutcome, int]:
    """Exact search with half of `transitions`; if it does not finish, a widening beam search
    with the rest, keeping the better order. Returns the outcome and the transitions spent."""
    limits = _Limits(transitions // 2, step)
    exact = search_piece(model, piece, floor=floor, greedy=greedy, limits=limits)
    if exact.complete:
        return exact, exact.transitions
    left = transitions - exact.transitions
    beam = widening_beam(model, piece, floor=floor, transitions=left)
    if beam is not None and beam[1] < exact.peak:
        exact = PieceOutcome(beam[0], beam[1], exact.lower, False, exact.transitions)
    return exact, transitions


@ORDERS.register("optimal")
def optimal_order(
    graph: Graph,
    *,
    scratch: Mapping[int, int] | None = None,
    time_budget: float | None = None,
    evaluate: ArenaOf | None = None,
) -> OrderResult:
    """Minimum-peak order (module steps 1-2); `time_budget`: seconds of work, default 0.5."""
    budget = DEFAULT_TIME_BUDGET if time_budget is None else time_budget
    model = build_model(graph, scratch)
    pieces = split_into_pieces(model)
    results = [best_heuristic_order(model, piece) for piece in pieces]
    floor = max([model.lower_bound, *(p.lower_bound(model) for p in pieces)])
    work = int(budget * TRANSITIONS_PER_SECOND)
    stopped = 0
    todo = sorted(range(len(pieces)), key=lambda i: (-results[i][1], i))
    with progress.step("order search") as step:
        for rank, i in enumerate(todo):
            if results[i][1] <= floor:
                break  # this piece and the next ones (lower greedy peaks) cannot set the peak
            waiting = sum(1 for j in todo[rank:] if results[j][1] > floor)
            outcome, spent = solve_piece(
                model,
                pieces[i],
                floor=floor,
                greedy=results[i],
                transitions=work // waiting,
                step=step,
            )
            work -= spent
            results[i] = (outcome.order, outcome.peak)
            floor = max(floor, outcome.lower)
            stopped += not outcome.complete
    order = tuple(v for piece_order, _ in results for v in piece_order)
    peak = max([model.start_bytes, *(p for _, p in results)])
    note = ""
    if stopped and peak > floor:
        note = (
            f"time budget reached: best order found has peak {peak} B, proven lower bound "
            f"{floor} B ({stopped} of {len(pieces)} pieces not searched to the end)"
        )
    return OrderResult(order, peak, floor, proven_optimal=peak <= floor, note=note)
