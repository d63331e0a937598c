"""Branch partitioning, as LCP (Hadidi et al., IEEE IoT Journal 2020): the independent branches
between a fork and its join run on different boards, which exchange only the fork's tensor and
the branches' outputs.

Steps:
1. The cut operators: those every path from the model's inputs to its outputs passes through
   (every other operator is an ancestor or a descendant, and no edge jumps from an ancestor to a
   descendant). Between two consecutive cuts (and before the first, after the last) lies a
   region; its weakly connected components are independent branches.
2. Cuts, and regions of one branch, stay on board 0 (the stem, the merge, the classifier).
3. A region's branches go to boards longest first (LPT, Graham 1969): each to the board where it
   would end soonest, its compute plus, off board 0, the transfers of what it reads and writes
   across the region's border; only boards where the whole assignment still fits RAM and flash.
   The spread is kept when the modelled latency drops.
Complexity O(ops^2 / 64) for the ancestor bitsets, O(ops x (ops + edges)) for the evaluations.
Weaknesses: one level of nesting (a branch's own forks stay on its board), branches of unequal
length balance only as well as LPT packs them, and the model's stored order is kept on each board.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcugen.plan.partition.partition import Partition, misfit, simulate
from mcugen.plan.partition.problem import PartitionDoesNotFit, PartitionProblem


def op_edges(problem: PartitionProblem) -> list[tuple[int, int]]:
    """(producer, consumer) operator pairs, sorted, each once."""
    producer = problem.producer()
    pairs = {(producer[t], op.index) for op in problem.ops for t in op.inputs if t in producer}
    return sorted(pairs)


def cut_operators(problem: PartitionProblem) -> list[int]:
    """Step 1's cuts, in stored order."""
    n = len(problem.ops)
    edges = op_edges(problem)
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[int] = [0] * n  # bitset of direct successors
    for a, b in edges:
        preds[b].append(a)
        succs[a] |= 1 << b
    anc = [0] * n
    for v in range(n):  # stored order is topological
        for a in preds[v]:
            anc[v] |= anc[a] | (1 << a)
    desc = [0] * n
    for v in reversed(range(n)):
        for b in range(n):
            if succs[v] >> b & 1:
                desc[v] |= desc[b] | (1 << b)
    cuts = []
    for v in range(n):
        if anc[v].bit_count() + desc[v].bit_count() != n - 1:
            continue
        members = anc[v]
        if not any(succs[a] & desc[v] for a in range(n) if members >> a & 1):
            cuts.append(v)
    return cuts


def regions(problem: PartitionProblem) -> list[list[list[int]]]:
    """The branches of each region between consecutive cuts (step 1), each a sorted list of
    operators; regions in stored order, branches by their first operator."""
    cuts = set(cut_operators(problem))
    groups: list[list[int]] = [[]]
    for op in problem.ops:
        if op.index in cuts:
            groups.append([])
        else:
            groups[-1].append(op.index)
    parent = {i: i for group in groups for i in group}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in op_edges(problem):
        if a in parent and b in parent:
            ra, rb = root(a), root(b)
            parent[max(ra, rb)] = min(ra, rb)
    found = []
    for group in groups:
        branches: dict[int, list[int]] = {}
        for i in group:
            branches.setdefault(root(i), []).append(i)
        if group:
            found.append(sorted(branches.values(), key=lambda b: b[0]))
    return found


def _border_seconds(problem: PartitionProblem, ops: Sequence[int]) -> float:
    """Seconds to send a branch what it reads from outside and to send back what it writes
    for outside (one link each way)."""
    inside = set(ops)
    producer, consumers = problem.producer(), problem.consumers()
    reads = {  # model inputs are loaded on every board that reads them, before the clock
        t for i in ops for t in problem.ops[i].inputs if t in producer and producer[t] not in inside
    }
    writes = {
        t
        for i in ops
        for t in problem.ops[i].outputs
        if t in problem.outputs or any(c not in inside for c in consumers.get(t, []))
    }
    return sum(problem.transfer_seconds(t) for t in sorted(reads | writes))


def _spread(
    problem: PartitionProblem, assignment: list[int], branches: list[list[int]]
) -> list[int]:
    """Step 3 for one region: the assignment with its branches spread by LPT."""
    trial = list(assignment)
    load = [0.0] * problem.n_boards
    ranked = sorted(branches, key=lambda b: (-sum(problem.ops[i].seconds[0] for i in b), b[0]))
    order = range(len(problem.ops))
    for ops in ranked:
        border = _border_seconds(problem, ops)
        options = []
        for k in range(problem.n_boards):
            cost = sum(problem.ops[i].seconds[k] for i in ops) + (border if k else 0.0)
            options.append((load[k] + cost, k))
        for end, k in sorted(options):
            for i in ops:
                trial[i] = k
            if not misfit(problem, trial, order) or k == 0:
                load[k] = end
                break
    return trial


def branch(problem: PartitionProblem, *, budget: float | None = None) -> Partition:
    """Branches spread over the boards, the rest on board 0 (module docstring)."""
    del budget
    assignment = [0] * len(problem.ops)
    order = range(len(problem.ops))
    spread_regions = 0
    for branches in regions(problem):
        if len(branches) < 2 or problem.n_boards < 2:
            continue
        trial = _spread(problem, assignment, branches)
        faster = (
            simulate(problem, trial, order).latency < simulate(problem, assignment, order).latency
        )
        fits = not misfit(problem, trial, order)
        if (faster and fits) or (fits and misfit(problem, assignment, order)):
            assignment, spread_regions = trial, spread_regions + 1
    reason = misfit(problem, assignment, order)
    if reason:
        raise PartitionDoesNotFit(
            f"the branch partition does not fit: {reason}",
            hint="try --partition pipeline or cpsat, or more boards",
        )
    return Partition.of(
        "branch", problem, assignment, note=f"branch regions spread: {spread_regions}"
    )
