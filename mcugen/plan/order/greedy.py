"""Greedy memory-aware operator order: run, at each step, the ready operator a rule likes best.

Steps:
1. Split the graph at cut points (`cuts.py`): every order runs the pieces one after the other.
2. In each piece, build an order with each rule below, starting from the operators before it:
   - "peak then growth": the ready operator that keeps the step's live bytes under the peak so far
     (or raises it least), then the one that grows the resident bytes least (frees the most);
   - "growth then step": least growth of the resident bytes first, then smallest step;
   - "depth first": an operator that reads what was produced most recently (finish a branch before
     starting the next), then least growth;
   - "peak then depth": depth first among the operators that keep the step under the peak so far;
   and the file's order restricted to the piece. Keep the order with the smallest peak (the first
   one on ties). Ties inside a rule go to the lowest operator index, so runs are deterministic.
Complexity: O(rules * n * (ready width + degree)) with incremental bookkeeping of what each
operator would free. Weakness: myopic. An operator that allocates a lot now to free more later
(a wide branch that must start before a narrow one can finish) can fool every rule; `optimal`
then does better. Related work: Liberis & Lane 2019 and SERENITY (Ahn et al. 2020) use such greedy
schedules as baselines and upper bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mcugen.model.ir import Graph
from mcugen.plan.order import ORDERS, ArenaOf, OrderResult, stored_order
from mcugen.plan.order.cuts import Piece, split_into_pieces
from mcugen.plan.order.state import ScheduleModel, build_model, iter_bits


class _Run:
    """Incremental state of one greedy run: executed set, resident bytes, what each op frees."""

    def __init__(self, model: ScheduleModel, done: int, goal: int, resident: int) -> None:
        self.model = model
        self.done = done
        self.resident = resident
        self.peak = model.start_bytes if done == 0 else 0
        self.position: dict[int, int] = {}  # op -> step it ran at (ops in `done`: absent)
        self.waiting = {v: (model.preds[v] & ~done).bit_count() for v in iter_bits(goal & ~done)}
        self.ready = sorted(v for v, count in self.waiting.items() if count == 0)
        self.pending = dict.fromkeys(self.waiting, 0)  # op -> bytes it would free if run now
        for v in self.waiting:
            for _, size, users in model.frees[v]:
                if users & ~done == 1 << v:
                    self.pending[v] += size

    def growth(self, v: int) -> int:
        return self.model.kept[v] - self.pending[v]

    def step(self, v: int) -> int:
        return self.model.step_bytes(self.done, self.resident, v)

    def recency(self, v: int) -> int:
        return max((self.position.get(u, -1) for u in iter_bits(self.model.preds[v])), default=-1)

    def run(self, v: int) -> None:
        model = self.model
        self.peak = max(self.peak, self.step(v))
        self.resident = model.after(self.done, self.resident, v)
        self.done |= 1 << v
        self.position[v] = len(self.position)
        self.ready.remove(v)
        for _, size, users in model.frees[v]:
            left = users & ~self.done
            last_user = left.bit_length() - 1
            if left and left == 1 << last_user and last_user in self.pending:
                self.pending[last_user] += size
        for w in model.succs[v]:
            if w in self.waiting:
                self.waiting[w] -= 1
                if self.waiting[w] == 0:
                    self.ready.append(w)


Rule = Callable[[_Run, int], tuple[int, ...]]


def _peak_then_growth(run: _Run, v: int) -> tuple[int, ...]:
    return (max(run.peak, run.step(v)), run.growth(v), v)


def _growth_then_step(run: _Run, v: int) -> tuple[int, ...]:
    return (run.growth(v), run.step(v), v)


def _depth_first(run: _Run, v: int) -> tuple[int, ...]:
    return (-run.recency(v), run.growth(v), v)


def _peak_then_depth(run: _Run, v: int) -> tuple[int, ...]:
    return (max(run.peak, run.step(v)), -run.recency(v), run.growth(v), v)


RULES: tuple[Rule, ...] = (_peak_then_growth, _growth_then_step, _depth_first, _peak_then_depth)


def complete_greedily(
    model: ScheduleModel, done: int, goal: int, rule: Rule, resident: int | None = None
) -> tuple[int, ...]:
    """Order the operators of `goal` not in `done` with `rule`, starting after `done`
    (`resident`: the resident bytes after `done`, if known)."""
    run = _Run(model, done, goal, model.resident(done) if resident is None else resident)
    order: list[int] = []
    while run.ready:
        v = min(run.ready, key=lambda u: rule(run, u))
        run.run(v)
        order.append(v)
    return tuple(order)


def is_topological(model: ScheduleModel, order: tuple[int, ...], done: int = 0) -> bool:
    """Whether each operator of `order` runs after its predecessors (those in `done` ran)."""
    for v in order:
        if model.preds[v] & ~done:
            return False
        done |= 1 << v
    return True


def best_heuristic_order(model: ScheduleModel, piece: Piece) -> tuple[tuple[int, ...], int]:
    """The best of the greedy rules and the stored order on one piece: (its order, its peak)."""
    candidates = [
        complete_greedily(model, piece.before, piece.goal, rule, piece.resident) for rule in RULES
    ]
    stored = tuple(iter_bits(piece.ops))  # operator indices are positions in the file
    if is_topological(model, stored, piece.before):
        candidates.append(stored)
    scored = [
        (model.peak(order, piece.before, piece.resident), k) for k, order in enumerate(candidates)
    ]
    peak, best = min(scored)
    return candidates[best], peak


@ORDERS.register("greedy")
def greedy_order(
    graph: Graph,
    *,
    scratch: Mapping[int, int] | None = None,
    time_budget: float | None = None,
    evaluate: ArenaOf | None = None,
) -> OrderResult:
    """Greedy order, piece by piece: never worse than the stored order. Fast (no search)."""
    del time_budget
    model = build_model(graph, scratch)
    order: list[int] = []
    peak = model.start_bytes
    for piece in split_into_pieces(model):
        piece_order, piece_peak = best_heuristic_order(model, piece)
        order.extend(piece_order)
        peak = max(peak, piece_peak)
    bound = model.lower_bound
    whole = stored_order(graph, scratch=scratch)
    if whole.peak_live_bytes < peak:
        # the file may interleave pieces, which the pieces' own stored orders cannot
        return OrderResult(
            whole.order, whole.peak_live_bytes, bound, whole.peak_live_bytes == bound
        )
    return OrderResult(tuple(order), peak, bound, proven_optimal=peak == bound)
