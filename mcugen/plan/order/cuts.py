"""Cut points: split an operator graph into pieces that every order runs one after the other.

An operator is a *cut point* when it is comparable with every other operator (each one is its
ancestor or its descendant). Every topological order then runs all of its ancestors, then it, then
all of its descendants. Consecutive cut points bound the pieces (a piece ends at its cut point),
and since the bytes live while an operator runs depend only on the set of operators already done
(`state.py`), a piece's best order does not depend on how the earlier pieces were ordered: each
piece is searched alone, from the set of operators before it, and the peak of the whole order is
the maximum over the pieces.

This is SERENITY's divide-and-conquer at single-tensor cuts, generalised: in a chain of cells the
operator producing the tensor between two cells is a cut point, and because each piece is searched
with the global live-memory model, tensors live across the cut (a graph output produced early, a
graph input read late) are accounted for exactly instead of invalidating the cut.
Complexity: O(n * edges / word size) with bitsets. Weakness: an operator with no inputs (floating
anywhere in the order) is a cut point of nothing, so it merges the pieces around it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from mcugen.errors import McugenError
from mcugen.plan.order.state import ScheduleModel, iter_bits


@dataclass(frozen=True)
class Piece:
    """Operators `ops` that run right after the operators in `before`, in every order."""

    before: int
    ops: int
    resident: int  # bytes live between steps once the operators in `before` ran

    @property
    def goal(self) -> int:
        return self.before | self.ops

    @property
    def size(self) -> int:
        return self.ops.bit_count()

    def lower_bound(self, model: ScheduleModel) -> int:
        """No order of this piece has a smaller peak (its steps only; step 0 in the first)."""
        bound = max((model.working_set[v] for v in iter_bits(self.ops)), default=0)
        if self.before == 0:
            bound = max(bound, model.start_bytes)
        if self.goal == model.full:
            bound = max(bound, model.outputs_bytes)
        return bound


def topological_order(model: ScheduleModel) -> tuple[int, ...]:
    """Kahn's algorithm, lowest operator index first. O(n log n + edges)."""
    waiting = [p.bit_count() for p in model.preds]
    ready = [v for v in range(model.n) if waiting[v] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        for w in model.succs[v]:
            waiting[w] -= 1
            if waiting[w] == 0:
                heapq.heappush(ready, w)
    if len(order) != model.n:
        raise McugenError("the operator graph has a cycle", hint="check the model's data flow")
    return tuple(order)


def ancestors_descendants(model: ScheduleModel) -> tuple[list[int], list[int]]:
    """Operator -> mask of its ancestors, and mask of its descendants."""
    topo = topological_order(model)
    anc = [0] * model.n
    desc = [0] * model.n
    for v in topo:
        for u in iter_bits(model.preds[v]):
            anc[v] |= anc[u] | (1 << u)
    for v in reversed(topo):
        for w in model.succs[v]:
            desc[v] |= desc[w] | (1 << w)
    return anc, desc


def split_into_pieces(model: ScheduleModel) -> tuple[Piece, ...]:
    """The pieces between consecutive cut points, in execution order; their `ops` partition all
    operators. A graph without cut points is one piece."""
    anc, desc = ancestors_descendants(model)
    cuts = [v for v in range(model.n) if anc[v] | desc[v] | (1 << v) == model.full]
    cuts.sort(key=lambda v: anc[v].bit_count())
    bounds = [anc[v] | (1 << v) for v in cuts]
    if not bounds or bounds[-1] != model.full:
        bounds.append(model.full)
    pieces: list[Piece] = []
    before = 0
    resident = model.resident(0)
    for upto in bounds:
        pieces.append(Piece(before, upto & ~before, resident))
        for v in iter_bits(upto & ~before):  # any order: resident bytes depend on the set only
            resident = model.after(before, resident, v)
            before |= 1 << v
    return tuple(pieces)
