"""Pipeline partitioning: consecutive stages of the stored order, stage k on board k.

Steps:
1. For a target stage time T, fill the boards in turn: an operator joins the current board while
   the board's compute stays within T and its arena and weights still fit it (partition.py's
   count, operators after it counted as on another board); else the next board starts.
2. Bisect T between the longest operator and the whole model (`ROUNDS` rounds) for the smallest
   T that fills at most every board: the most balanced stages that fit.
Complexity O(ROUNDS x ops x (ops + tensors)). Weaknesses: a stage boundary's activations cross a
link, so latency is the sum of every stage plus the transfers: model parallelism lets a model
fit several boards' RAM, it never makes one inference faster (the baseline LCP is compared to,
Hadidi et al. 2020); the greedy fill can miss a fitting cut that a later boundary would allow.
"""

from __future__ import annotations

from mcugen.plan.partition.partition import (
    Partition,
    board_arena,
    board_flash,
    misfit,
    oversized,
)
from mcugen.plan.partition.problem import UNSPLITTABLE, PartitionDoesNotFit, PartitionProblem

#: Bisection rounds of the stage time (the answer within 2^-ROUNDS of the range).
ROUNDS = 24
ELSEWHERE = -2  # an operator not assigned yet: counted as on another board


def _fits(problem: PartitionProblem, assignment: list[int], board: int) -> bool:
    order = range(len(problem.ops))
    spec = problem.boards[board]
    return (
        board_arena(problem, assignment, order, board) <= spec.ram
        and board_flash(problem, assignment, board) <= spec.flash
    )


def fill(problem: PartitionProblem, target: float) -> list[int] | None:
    """Step 1: the stages for stage time `target`, or None when the boards run out."""
    assignment = [ELSEWHERE] * len(problem.ops)
    board, load, used = 0, 0.0, 0
    for op in problem.ops:
        while True:
            if board >= problem.n_boards:
                return None
            cost = op.seconds[board]
            if used == 0 or load + cost <= target:
                assignment[op.index] = board
                if _fits(problem, assignment, board):
                    load, used = load + cost, used + 1
                    break
                assignment[op.index] = ELSEWHERE  # does not fit (even alone): next board
            board, load, used = board + 1, 0.0, 0
    return assignment


def pipeline(problem: PartitionProblem, *, budget: float | None = None) -> Partition:
    """Balanced consecutive stages that fit (module docstring); `budget` is not used."""
    del budget
    if not problem.ops:
        return Partition.of("pipeline", problem, ())
    lo = max(max(op.seconds) for op in problem.ops)
    hi = sum(max(op.seconds) for op in problem.ops)
    best = fill(problem, hi)
    if best is None:
        raise _no_fit(problem)
    for _ in range(ROUNDS):
        mid = (lo + hi) / 2
        found = fill(problem, mid)
        if found is None:
            lo = mid
        else:
            best, hi = found, mid
    stages = len(set(best))
    return Partition.of("pipeline", problem, best, note=f"{stages} stages")


def _no_fit(problem: PartitionProblem) -> PartitionDoesNotFit:
    """The error when no fill fits: what the last board was asked to hold."""
    assignment = [0] * len(problem.ops)
    reason = misfit(problem, assignment, range(len(problem.ops)))
    names = ", ".join(b.name for b in problem.boards)
    why = oversized(problem)
    return PartitionDoesNotFit(
        f"no pipeline of {problem.n_boards} boards ({names}) holds the model"
        + (f": {why}" if why else f" (on one: {reason})" if reason else ""),
        hint=UNSPLITTABLE if why else "add boards, or boards with more RAM",
    )
