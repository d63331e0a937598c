"""Live-memory bookkeeping for order search: the peak of `peak_of`, computed from a set of
executed operators instead of a whole order.

The model is exactly the one of `mcugen.plan.buffers` (TFLM's lifetime convention): sizes are
rounded up to the arena alignment, constants and variables are not counted, graph inputs are live
from step 0, graph outputs to the last step, an operator's outputs are created while its inputs are
still live, scratch lives during its operator, and a tensor read by nobody lives during its
producer's step only. Its key property: the bytes live while operator `v` runs depend only on the
*set* S of operators already executed, not on their order:

    live(S, v) = resident(S) + born(v) + scratch(v)  [+ outputs nobody writes, if v is the last]

where resident(S) is the size of the tensors created by S (or graph inputs) that some operator
outside S still uses, or that are graph outputs. That is what lets a search memoise on S
(SERENITY's "signature") and what `cuts.py` relies on to solve pieces of a graph independently.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from mcugen.model.ir import Graph
from mcugen.plan.buffers import align_up

#: Operators whose effects are not visible in the data flow; they keep their stored relative order.
STATEFUL_OPCODES = frozenset({"ASSIGN_VARIABLE", "READ_VARIABLE", "VAR_HANDLE", "CALL_ONCE"})

_AT_START = -1  # creation time of graph inputs (step 0)
_AT_END = -2  # creation time of graph outputs no operator writes (the last step)


@dataclass(frozen=True)
class ScheduleModel:
    """Per-operator data for O(degree) live-memory updates; operators are bits of an int mask."""

    n: int
    full: int  # mask of all operators
    preds: tuple[int, ...]  # operator -> mask of operators that must run before it
    succs: tuple[tuple[int, ...], ...]  # operator -> operators that list it in `preds`
    born: tuple[int, ...]  # operator -> bytes of the tensors it creates (dead ones included)
    kept: tuple[int, ...]  # operator -> bytes of those still needed after its step
    scratch: tuple[int, ...]  # operator -> aligned scratch bytes
    frees: tuple[tuple[tuple[int, int, int], ...], ...]  # operator -> (tensor, size, users mask)
    working_set: tuple[int, ...]  # operator -> bytes live during its step in every order
    start_bytes: int  # live at step 0: the graph inputs
    start_resident: int  # graph inputs still needed after step 0
    end_extra: int  # graph outputs no operator writes: live at the last step only
    outputs_bytes: int  # all graph outputs: live at the last step
    # filled in __post_init__: operator -> born + scratch; mask of the operators that can be
    # free (`moves`): those that may free at least the bytes they keep
    step_base: tuple[int, ...] = ()
    may_free: int = 0

    def __post_init__(self) -> None:
        base = tuple(b + s for b, s in zip(self.born, self.scratch, strict=True))
        object.__setattr__(self, "step_base", base)
        may_free = 0
        for v in range(self.n):
            if self.kept[v] <= sum(size for _, size, _ in self.frees[v]):
                may_free |= 1 << v
        object.__setattr__(self, "may_free", may_free)

    @property
    def lower_bound(self) -> int:
        """No order has a smaller peak (same as `op_working_set_bound` on well-formed graphs)."""
        return max(self.start_bytes, self.outputs_bytes, *self.working_set, 0)

    def resident(self, done: int) -> int:
        """Bytes live between steps after the operators in `done` ran. O(tensors created)."""
        total = self.start_resident
        for v in iter_bits(done):
            total += self.kept[v]
            for _, size, users in self.frees[v]:
                if users & ~done == 0 and users.bit_length() - 1 == v:  # once per tensor
                    total -= size
        return total

    def step_bytes(self, done: int, resident: int, v: int) -> int:
        """Live bytes while `v` runs after the operators in `done` (`resident` = resident(done))."""
        extra = self.end_extra if done | (1 << v) == self.full else 0
        return resident + self.born[v] + self.scratch[v] + extra

    def freed(self, done: int, v: int) -> int:
        """Bytes whose last use is `v` when it runs after the operators in `done`."""
        later = ~(done | (1 << v))
        total = 0
        for _, size, users in self.frees[v]:
            if not users & later:
                total += size
        return total

    def after(self, done: int, resident: int, v: int) -> int:
        """resident(done | v), from resident(done). O(inputs of v)."""
        return resident + self.kept[v] - self.freed(done, v)

    def ready_after(self, within: int, done: int, ready: int, ran: int) -> int:
        """The ready operators of `within` once `ran` (in `done`) ran; `ready` was before it."""
        ready &= ~(1 << ran)
        for w in self.succs[ran]:
            if within >> w & 1 and self.preds[w] & ~done == 0:
                ready |= 1 << w
        return ready

    def moves(self, done: int, resident: int, ready: int, bound: int) -> Iterable[int]:
        """The ready operators worth trying next in a search: all of them, or one that is free.

        A ready operator is *free* when running it now keeps the step within `bound` (the peak
        so far) and does not grow the resident bytes. Moving it to the front of any completion
        lowers (never raises) the live bytes of every later step, because what it frees only
        grows with the executed set; so some optimal completion starts with it. Not applied when
        outputs nobody writes add bytes to the last step (moving an operator off the end could
        then raise it)."""
        if not self.end_extra:
            mask = ready & self.may_free
            while mask:  # iter_bits, inlined: this is the search's innermost loop
                low = mask & -mask
                v = low.bit_length() - 1
                mask ^= low
                if resident + self.step_base[v] <= bound and self.kept[v] <= self.freed(done, v):
                    return (v,)
        found = []
        mask = ready
        while mask:
            low = mask & -mask
            found.append(low.bit_length() - 1)
            mask ^= low
        return found

    def peak(self, order: Sequence[int], start: int = 0, resident: int | None = None) -> int:
        """Peak live bytes of the operators `order` run after the set `start` (0: the whole
        order, step 0 included; `resident` = resident(start) if known). Equals
        `peak_of(graph, order, scratch)` for a full order."""
        done = start
        resident = self.resident(start) if resident is None else resident
        best = self.start_bytes if start == 0 else 0
        for v in order:
            best = max(best, self.step_bytes(done, resident, v))
            resident = self.after(done, resident, v)
            done |= 1 << v
        return best


def iter_bits(mask: int) -> Iterator[int]:
    """Indices of the set bits of `mask`, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def build_model(graph: Graph, scratch: Mapping[int, int] | None = None) -> ScheduleModel:
    """Precompute the schedule model of `graph`. O(tensors + operator inputs/outputs)."""
    n = len(graph.operators)
    arena = {t for t in graph.activation_tensors() if graph.tensors[t].nbytes > 0}
    writers, readers = _writers_readers(graph)
    created = _creation_times(graph, writers)
    outputs = set(graph.outputs)
    users = {t: _users(t, created[t], writers, readers) for t in created}
    born = [0] * n
    kept = [0] * n
    frees: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    start_bytes = start_resident = end_extra = 0
    for t, when in sorted(created.items()):
        if t not in arena:
            continue
        size = align_up(graph.tensors[t].nbytes)
        needed = t in outputs or users[t] != 0
        if when == _AT_START:
            start_bytes += size
            start_resident += size if needed else 0
        elif when == _AT_END:
            end_extra += size
        else:
            born[when] += size
            kept[when] += size if needed else 0
        if t not in outputs and when != _AT_END:
            for v in iter_bits(users[t]):
                frees[v].append((t, size, users[t]))
    scratch_bytes = [align_up((scratch or {}).get(v, 0)) for v in range(n)]
    preds = _dependencies(graph, writers, readers)
    succs: list[list[int]] = [[] for _ in range(n)]
    for v in range(n):
        for u in iter_bits(preds[v]):
            succs[u].append(v)
    working = _working_sets(graph, arena, created, scratch_bytes)
    if n == 0:
        start_bytes += end_extra
    return ScheduleModel(
        n=n,
        full=(1 << n) - 1,
        preds=tuple(preds),
        succs=tuple(tuple(s) for s in succs),
        born=tuple(born),
        kept=tuple(kept),
        scratch=tuple(scratch_bytes),
        frees=tuple(tuple(f) for f in frees),
        working_set=working,
        start_bytes=start_bytes,
        start_resident=start_resident,
        end_extra=end_extra,
        outputs_bytes=sum(align_up(graph.tensors[t].nbytes) for t in outputs if t in arena),
    )


def _mask(ops: Sequence[int]) -> int:
    mask = 0
    for v in ops:
        mask |= 1 << v
    return mask


def _users(
    t: int, when: int, writers: Mapping[int, list[int]], readers: Mapping[int, list[int]]
) -> int:
    """Mask of the operators that touch `t` after it is created (they keep it live)."""
    written = writers.get(t, [])
    return _mask(readers.get(t, [])) | _mask(written if when == _AT_START else written[1:])


def _writers_readers(graph: Graph) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Tensor -> operators writing it / reading it, in stored order, each operator once."""
    writers: dict[int, list[int]] = {}
    readers: dict[int, list[int]] = {}
    for op in graph.operators:
        for t in dict.fromkeys(op.outputs):
            writers.setdefault(t, []).append(op.index)
        for t in dict.fromkeys(t for t in op.inputs if t >= 0):
            readers.setdefault(t, []).append(op.index)
    return writers, readers


def _creation_times(graph: Graph, writers: Mapping[int, list[int]]) -> dict[int, int]:
    """Tensor -> the operator whose step creates it, or _AT_START / _AT_END (as tensor_lifetimes).

    A tensor written by several operators is created by the first of them in stored order; the
    dependencies keep those writers in stored order, so that holds in every order searched."""
    created: dict[int, int] = {t: _AT_START for t in graph.inputs}
    for t, ops in writers.items():
        created.setdefault(t, ops[0])
    for t in graph.outputs:
        created.setdefault(t, _AT_END)
    return created


def _dependencies(
    graph: Graph, writers: Mapping[int, list[int]], readers: Mapping[int, list[int]]
) -> list[int]:
    """Operator -> mask of operators that must precede it: the writers of what it reads, earlier
    writers of what it writes, and earlier operators sharing a variable or stateful opcode."""
    preds = [0] * len(graph.operators)
    for t, ops in writers.items():
        if graph.tensors[t].is_variable:
            continue  # ordered by the chains below: a state is read before it is updated
        for k, w in enumerate(ops):
            preds[w] |= _mask(ops[:k])
        for r in readers.get(t, ()):
            preds[r] |= _mask([w for w in ops if w != r])
    chains: dict[object, list[int]] = {}
    for op in graph.operators:
        touched = [t for t in (*op.inputs, *op.outputs) if t >= 0]
        keys: list[object] = [t for t in touched if graph.tensors[t].is_variable]
        if op.opcode in STATEFUL_OPCODES:
            keys.append("stateful")
        for key in keys:
            chain = chains.setdefault(key, [])
            if chain and chain[-1] != op.index:
                preds[op.index] |= 1 << chain[-1]
            chain.append(op.index)
    return preds


def _working_sets(
    graph: Graph, arena: set[int], created: Mapping[int, int], scratch: Sequence[int]
) -> tuple[int, ...]:
    """Operator -> bytes of its distinct arena inputs/outputs plus scratch: live at its step."""
    result = []
    for op in graph.operators:
        touched = {
            t
            for t in (*op.inputs, *op.outputs)
            if t in arena and created.get(t, _AT_END) != _AT_END
        }
        size = sum(align_up(graph.tensors[t].nbytes) for t in touched)
        result.append(size + scratch[op.index])
    return tuple(result)
