"""A partition cut into sub-models: what each board runs, as ordinary mcugen graphs.

A board's operators cannot always run in one invoke: under LCP's `branch` partition board 0 runs
the stem, the other boards the branches, and board 0 again the merge, which needs their outputs.
So a board's operators are cut into *segments*, each one invoke of its own sub-model:
1. Each operator gets a level: the largest over its inputs of the producer's level, plus one when
   the producer is on another board (0 for operators that read only model inputs). Operators of
   one board at one level form a segment; every edge between two segments then goes to a higher
   level, so the segments form a DAG.
2. Consecutive segments of one board (in level order) merge when the segment graph stays
   acyclic: a board is cut only where its operators wait for another board that waits for it.
3. Each segment becomes a Graph: its operators in the partition's order; its inputs the model
   inputs it reads, then the tensors it receives (from other boards or its board's earlier
   segments), by index; its outputs the tensors it produces that another segment or the host
   needs, by index. Tensors keep their shape, dtype, quantization and constant bytes, so every
   tensor crossing a board has exactly the bytes it had on one board.
Complexity O(segments^2 x (operators + tensors)) for the merges; segments are few (at most
boards x (boards + 1) levels).
`board_programs` then joins each board's segments into one sub-model, run phase by phase by one
firmware image; a tensor one segment leaves for a later one of the same board stays in that
board's arena (counted as kept on the board, not as a link). Weakness: a tensor a board receives
for a later phase is an input of its program, so it holds arena from the first phase on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from mcugen.model.ir import Graph
from mcugen.plan.partition.partition import Partition
from mcugen.plan.partition.problem import HOST


@dataclass(frozen=True)
class Segment:
    """One invoke of one board: the original operators it runs and the original tensors it
    receives and sends, with `graph` the sub-model (its tensors renumbered, its inputs and
    outputs in the order of `inputs` and `outputs`)."""

    index: int  # position in the run order
    board: int
    ops: tuple[int, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    graph: Graph

    def source(self, tensor: int, segments: Sequence[Segment]) -> int:
        """The board that produces `tensor` (HOST for a model input)."""
        for s in segments:
            if tensor in s.outputs:
                return s.board
        return HOST


def op_levels(graph: Graph, part: Partition) -> dict[int, int]:
    """Step 1 of the module docstring: operator index -> level."""
    producer = graph.producers()
    level: dict[int, int] = {}
    for op_index in part.order:
        board = part.assignment[op_index]
        found = 0
        for t in graph.operators[op_index].inputs:
            if t >= 0 and t in producer:
                p = producer[t]
                found = max(found, level[p] + (part.assignment[p] != board))
        level[op_index] = found
    return level


def _edges(graph: Graph, groups: Sequence[tuple[int, ...]]) -> set[tuple[int, int]]:
    where = {op: g for g, ops in enumerate(groups) for op in ops}
    producer = graph.producers()
    found = set()
    for g, ops in enumerate(groups):
        for op in ops:
            for t in graph.operators[op].inputs:
                if t >= 0 and t in producer and where[producer[t]] != g:
                    found.add((where[producer[t]], g))
    return found


def _topological(count: int, edges: set[tuple[int, int]]) -> list[int] | None:
    """A topological order of `count` nodes (ties: the lowest index), None if there is a cycle."""
    indegree = [0] * count
    for _, b in edges:
        indegree[b] += 1
    ready = sorted(n for n in range(count) if indegree[n] == 0)
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for a, b in sorted(edges):
            if a == n:
                indegree[b] -= 1
                if indegree[b] == 0:
                    ready = sorted([*ready, b])
    return order if len(order) == count else None


def op_groups(graph: Graph, part: Partition) -> list[tuple[int, ...]]:
    """Steps 1 and 2: the segments' operators (partition order within each), in run order."""
    level = op_levels(graph, part)
    position = {op: k for k, op in enumerate(part.order)}
    keys = sorted({(level[op], part.assignment[op]) for op in part.order})
    groups = [
        tuple(op for op in part.order if (level[op], part.assignment[op]) == key) for key in keys
    ]
    merged = True
    while merged:
        merged = False
        for a in range(len(groups)):
            board = part.assignment[groups[a][0]]
            b = next(
                (k for k in range(a + 1, len(groups)) if part.assignment[groups[k][0]] == board),
                None,
            )
            if b is None:
                continue
            trial = [g for k, g in enumerate(groups) if k != b]
            trial[a] = tuple(sorted(groups[a] + groups[b], key=position.__getitem__))
            if _topological(len(trial), _edges(graph, trial)) is not None:
                groups, merged = trial, True
                break
    order = _topological(len(groups), _edges(graph, groups))
    assert order is not None, "segments of a valid partition form a DAG"
    return [groups[k] for k in order]


def sub_graph(
    graph: Graph, ops: Sequence[int], inputs: Sequence[int], outputs: Sequence[int], name: str
) -> Graph:
    """The Graph of operators `ops` (original indices, in order) reading `inputs` and writing
    `outputs` (original tensor indices): tensors renumbered in the order of their original
    index, everything else as it is."""
    used = set(inputs) | set(outputs)
    for k in ops:
        op = graph.operators[k]
        used.update(t for t in (*op.inputs, *op.outputs, *op.intermediates) if t >= 0)
    new = {t: n for n, t in enumerate(sorted(used))}

    def renumber(ts: Sequence[int]) -> tuple[int, ...]:
        return tuple(new[t] if t >= 0 else -1 for t in ts)

    tensors = tuple(replace(graph.tensors[t], index=new[t]) for t in sorted(used))
    operators = tuple(
        replace(
            graph.operators[k],
            index=n,
            inputs=renumber(graph.operators[k].inputs),
            outputs=renumber(graph.operators[k].outputs),
            intermediates=renumber(graph.operators[k].intermediates),
        )
        for n, k in enumerate(ops)
    )
    return Graph(tensors, operators, renumber(inputs), renumber(outputs), name=name)


def segments(graph: Graph, part: Partition) -> tuple[Segment, ...]:
    """The partition's segments in run order (module docstring)."""
    groups = op_groups(graph, part)
    activations = set(graph.activation_tensors())
    found = []
    for g, ops in enumerate(groups):
        reads = {t for op in ops for t in graph.operators[op].inputs if t in activations}
        writes = {t for op in ops for t in graph.operators[op].outputs if t >= 0}
        received = sorted(t for t in reads - writes if t not in graph.inputs)
        inputs = [t for t in graph.inputs if t in reads] + received
        needed = set(graph.outputs)
        for h, other in enumerate(groups):
            if h != g:
                needed |= {t for op in other for t in graph.operators[op].inputs}
        outputs = sorted(t for t in writes if t in needed)
        board = part.assignment[ops[0]]
        name = f"{graph.name or 'model'}_b{board}_s{g}"
        found.append(
            Segment(
                g,
                board,
                ops,
                tuple(inputs),
                tuple(outputs),
                sub_graph(graph, ops, inputs, outputs, name),
            )
        )
    return tuple(found)


@dataclass(frozen=True)
class BoardProgram:
    """All of one board's segments as one sub-model, which its firmware runs phase by phase:
    phase k is segment `segments[k]`, the next `phases[k]` operators of `ops`. Its inputs are
    the tensors the board receives (model inputs first, then tensors from other boards, by
    index), its outputs the tensors it sends (to other boards or the host); a tensor one phase
    leaves for a later one of the same board stays in the board's arena, unsent."""

    board: int
    segments: tuple[int, ...]
    ops: tuple[int, ...]
    phases: tuple[int, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    graph: Graph

    def phase_range(self, k: int) -> tuple[int, int]:
        """Positions (first, end) of phase k's operators in `ops`."""
        first = sum(self.phases[:k])
        return first, first + self.phases[k]


def board_programs(graph: Graph, segs: Sequence[Segment]) -> tuple[BoardProgram, ...]:
    """One `BoardProgram` per board that has segments, by board number. The firmware must run
    `ops` in this order (the plan's order is the stored one: link/multiboard.py checks it)."""
    found = []
    for board in sorted({s.board for s in segs}):
        mine = [s for s in segs if s.board == board]
        made = {t for s in mine for t in s.outputs}
        others = [s for s in segs if s.board != board]
        sent = set(graph.outputs) | {t for s in others for t in s.inputs}
        received = [t for s in mine for t in s.inputs if t not in made]
        inputs = [t for t in graph.inputs if t in received]
        inputs += sorted(set(received) - set(inputs))
        outputs = sorted(t for t in made if t in sent)
        ops = tuple(op for s in mine for op in s.ops)
        name = f"{graph.name or 'model'}_b{board}"
        found.append(
            BoardProgram(
                board,
                tuple(s.index for s in mine),
                ops,
                tuple(len(s.ops) for s in mine),
                tuple(inputs),
                tuple(outputs),
                sub_graph(graph, ops, inputs, outputs, name),
            )
        )
    return tuple(found)
