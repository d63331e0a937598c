"""A partition, its modelled schedule and what each board needs, checked.

A `Partition` is an assignment of operators to boards and an order (a topological order of all
operators; each board runs its own operators in that order). Everything else is derived:
- The schedule (`simulate`): a board starts an operator when it is free and every input is on it;
  compute on one board is sequential. A tensor produced on board a and read on board b crosses
  link (a, b) once, starting when it is produced (the UART's DMA sends it while the board
  computes); a link carries one tensor at a time, in the order their producers run. Each model
  input is on every board that reads it when the clock starts (the host loads it there before,
  as for one board); outputs go to the host over their board's host link, and the latency ends
  when the last one arrives.
- Each board's arena: the peak of its live bytes over its operators in order (whole tensors,
  16-byte aligned, no in-place sharing and no kernel scratch): a tensor lives from its producer
  (or, received or a model input the board reads, from the board's first operator) to its last
  reader on the board, and to the board's last operator when another board or the host needs it
  (the sender keeps it until the send ends, which this count does not time). mcugen's layouts
  reach the live-bytes peak of an order on the MLPerf Tiny models; sharing lowers it, scratch
  raises it.
- Each board's flash: the bytes of the constants its operators read (a constant two boards read
  is on both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from mcugen.plan.buffers import align_up
from mcugen.plan.partition.problem import HOST, PartitionInvalid, PartitionProblem

EPS = 1e-12
Link = tuple[int, int]  # (source board, destination board); HOST = -1 is the host


@dataclass(frozen=True)
class Transfer:
    tensor: int
    source: int
    dest: int
    start: float
    end: float
    nbytes: int


@dataclass(frozen=True)
class Schedule:
    starts: tuple[float, ...]  # by operator index
    ends: tuple[float, ...]
    transfers: tuple[Transfer, ...]
    latency: float


def check_order(problem: PartitionProblem, order: Sequence[int]) -> None:
    """Raise `PartitionInvalid` unless `order` is a topological order of all operators."""
    if sorted(order) != list(range(len(problem.ops))):
        raise PartitionInvalid("the order is not a permutation of the operators")
    producer = problem.producer()
    position = {op: k for k, op in enumerate(order)}
    for op in problem.ops:
        for t in op.inputs:
            if t in producer and position[producer[t]] >= position[op.index]:
                raise PartitionInvalid(f"operator {op.index} runs before the producer of {t}")


def loaded_inputs(
    problem: PartitionProblem, assignment: Sequence[int], board: int
) -> tuple[int, ...]:
    """The model inputs the host loads on `board` before the clock: those its operators read."""
    consumers = problem.consumers()
    return tuple(
        t for t in problem.inputs if any(assignment[c] == board for c in consumers.get(t, []))
    )


def simulate(
    problem: PartitionProblem, assignment: Sequence[int], order: Sequence[int]
) -> Schedule:
    """The modelled schedule of `assignment` run in `order` (module docstring). O(ops + edges)."""
    producer = problem.producer()
    consumers = problem.consumers()
    home = {t: assignment[p] for t, p in producer.items()}
    free = [0.0] * problem.n_boards
    link_free: dict[Link, float] = {}
    arrival = {
        (t, b): 0.0 for b in range(problem.n_boards) for t in loaded_inputs(problem, assignment, b)
    }
    transfers: list[Transfer] = []
    starts = [0.0] * len(problem.ops)
    ends = [0.0] * len(problem.ops)

    def send(t: int, ready: float) -> None:
        readers = {assignment[c] for c in consumers.get(t, [])} - {home[t]}
        dests = sorted(readers) + ([HOST] if t in problem.outputs else [])
        for dest in dests:
            link = (home[t], dest)
            start = max(ready, link_free.get(link, 0.0))
            end = start + problem.transfer_seconds(t)
            link_free[link] = end
            arrival[(t, dest)] = end
            transfers.append(Transfer(t, home[t], dest, start, end, problem.tensor_bytes[t]))

    for i in order:
        op, board = problem.ops[i], assignment[i]
        start = max([free[board], *(arrival[(t, board)] for t in op.inputs)])
        starts[i], ends[i] = start, start + op.seconds[board]
        free[board] = ends[i]
        for t in op.outputs:
            arrival[(t, board)] = ends[i]
            send(t, ends[i])
    latency = max([*ends, *(x.end for x in transfers if x.dest == HOST), 0.0])
    return Schedule(tuple(starts), tuple(ends), tuple(transfers), latency)


def board_arena(
    problem: PartitionProblem, assignment: Sequence[int], order: Sequence[int], board: int
) -> int:
    """Peak live bytes of `board` (module docstring); operators assigned to a board outside
    range(n_boards) count as on another board. O(ops + tensors)."""
    local = [i for i in order if assignment[i] == board]
    last_step = max(len(local) - 1, 0)
    producer = problem.producer()
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for step, i in enumerate(local):
        op = problem.ops[i]
        for t in op.inputs:
            first.setdefault(t, 0)  # produced here: already set at its producer
            last[t] = step
        for t in op.outputs:
            first.setdefault(t, step)
            last[t] = max(last.get(t, step), step)
    consumers = problem.consumers()
    for t in first:
        here = t in producer and assignment[producer[t]] == board
        sent = t in problem.outputs or any(assignment[c] != board for c in consumers.get(t, []))
        if here and sent:
            last[t] = last_step
    live = [0] * (last_step + 2)
    for t, f in first.items():
        live[f] += align_up(problem.tensor_bytes[t])
        live[last[t] + 1] -= align_up(problem.tensor_bytes[t])
    peak = running = 0
    for delta in live:
        running += delta
        peak = max(peak, running)
    return peak


def board_flash(problem: PartitionProblem, assignment: Sequence[int], board: int) -> int:
    constants = {t for op in problem.ops if assignment[op.index] == board for t in op.weights}
    return sum(problem.weight_bytes[t] for t in constants)


def misfit(problem: PartitionProblem, assignment: Sequence[int], order: Sequence[int]) -> str:
    """Why `assignment` does not fit the boards ("" when it does), board by board."""
    for k, board in enumerate(problem.boards):
        arena = board_arena(problem, assignment, order, k)
        if arena > board.ram:
            return f"board {k} ({board.name}): arena {arena:,} of {board.ram:,} bytes"
        flash = board_flash(problem, assignment, k)
        if flash > board.flash:
            return f"board {k} ({board.name}): weights {flash:,} of {board.flash:,} bytes"
    return ""


def oversized(problem: PartitionProblem) -> str:
    """Why no partition can fit ("" when this floor does not rule one out): an operator whose
    inputs and outputs alone exceed every board's RAM."""
    room = max((b.ram for b in problem.boards), default=0)
    for op in problem.ops:
        need = problem.working_set(op)
        if need > room:
            return (
                f"{op.label} alone needs {need:,} bytes of activations, more than any board's "
                f"{room:,}"
            )
    return ""


def lower_bound(problem: PartitionProblem) -> float:
    """No partition finishes sooner: the fastest boards' compute spread evenly over all boards,
    and the longest dependency path at each operator's fastest board (links free)."""
    total = sum(op.fastest for op in problem.ops)
    producer = problem.producer()
    finish: dict[int, float] = {}
    for op in problem.ops:  # stored order is topological
        ready = max((finish[producer[t]] for t in op.inputs if t in producer), default=0.0)
        finish[op.index] = ready + op.fastest
    return max(total / max(problem.n_boards, 1), max(finish.values(), default=0.0))


@dataclass(frozen=True)
class Partition:
    """Operators on boards, with the modelled schedule and what each board needs."""

    strategy: str
    assignment: tuple[int, ...]  # operator index -> board
    order: tuple[int, ...]
    schedule: Schedule
    compute: tuple[float, ...]  # seconds of compute per board
    arena: tuple[int, ...]  # bytes per board
    flash: tuple[int, ...]  # weight bytes per board
    link_bytes: Mapping[Link, int]  # data bytes per directed link, host links included
    single_latency: float  # everything on board 0 (the speed-up's reference)
    lower_bound: float
    note: str = ""
    proven_optimal: bool = False

    @property
    def latency(self) -> float:
        return self.schedule.latency

    @property
    def speedup(self) -> float:
        return self.single_latency / self.latency if self.latency > 0 else 1.0

    @property
    def board_bytes(self) -> int:
        """Bytes crossing board-to-board links (host links not counted)."""
        return sum(n for (a, b), n in self.link_bytes.items() if HOST not in (a, b))

    def crossing(self) -> tuple[int, ...]:
        """The tensors crossing board-to-board links, sorted."""
        found = {x.tensor for x in self.schedule.transfers if HOST not in (x.source, x.dest)}
        return tuple(sorted(found))

    @classmethod
    def of(
        cls,
        strategy: str,
        problem: PartitionProblem,
        assignment: Sequence[int],
        order: Sequence[int] | None = None,
        *,
        bound: float = 0.0,
        note: str = "",
        proven_optimal: bool = False,
    ) -> Partition:
        """The partition of `assignment` (run in `order`, default stored), derived and validated;
        `bound` is a strategy's proven bound, kept when above the generic one."""
        order = tuple(order) if order is not None else tuple(range(len(problem.ops)))
        assignment = tuple(assignment)
        schedule = simulate(problem, assignment, order)
        n = problem.n_boards
        links: dict[Link, int] = {}
        for k in range(n):
            loaded = loaded_inputs(problem, assignment, k)
            if loaded:
                links[(HOST, k)] = sum(problem.tensor_bytes[t] for t in loaded)
        for x in schedule.transfers:
            links[(x.source, x.dest)] = links.get((x.source, x.dest), 0) + x.nbytes
        part = cls(
            strategy,
            assignment,
            order,
            schedule,
            compute=tuple(
                sum(op.seconds[k] for op in problem.ops if assignment[op.index] == k)
                for k in range(n)
            ),
            arena=tuple(board_arena(problem, assignment, order, k) for k in range(n)),
            flash=tuple(board_flash(problem, assignment, k) for k in range(n)),
            link_bytes=MappingProxyType(dict(sorted(links.items()))),
            single_latency=simulate(problem, (0,) * len(problem.ops), order).latency,
            lower_bound=max(lower_bound(problem), bound),
            note=note,
            proven_optimal=proven_optimal,
        )
        part.validate(problem)
        return part

    def validate(self, problem: PartitionProblem) -> None:
        """Raise `PartitionInvalid` unless every operator is on a board, the order is
        topological, the schedule keeps every dependency, board and link busy once at a time,
        each board's arena and weights fit it, and the latency is not below the bound."""
        if len(self.assignment) != len(problem.ops):
            raise PartitionInvalid("not every operator is assigned")
        if any(not 0 <= b < problem.n_boards for b in self.assignment):
            raise PartitionInvalid("an operator is on a board that does not exist")
        check_order(problem, self.order)
        _check_schedule(problem, self)
        reason = misfit(problem, self.assignment, self.order)
        if reason:
            raise PartitionInvalid(f"does not fit: {reason}")
        if self.latency < self.lower_bound * (1 - 1e-9) - EPS:
            raise PartitionInvalid(f"latency {self.latency} below the bound {self.lower_bound}")


def _check_schedule(problem: PartitionProblem, part: Partition) -> None:
    """An independent check of the schedule: dependencies, and one thing at a time per board
    and per link."""
    s, producer = part.schedule, problem.producer()
    arrived = {(x.tensor, x.dest): x.end for x in s.transfers}
    for op in problem.ops:
        board = part.assignment[op.index]
        for t in op.inputs:
            if t in producer and part.assignment[producer[t]] == board:
                ready = s.ends[producer[t]]
            elif t not in producer:  # a model input, loaded before the clock
                ready = 0.0
            elif (t, board) in arrived:
                ready = arrived[(t, board)]
            else:
                raise PartitionInvalid(f"tensor {t} never reaches board {board}")
            if s.starts[op.index] < ready - EPS:
                raise PartitionInvalid(f"operator {op.index} starts before tensor {t} is there")
    busy: dict[tuple[str, int, int], list[tuple[float, float]]] = {}
    for op in problem.ops:
        busy.setdefault(("board", part.assignment[op.index], 0), []).append(
            (s.starts[op.index], s.ends[op.index])
        )
    for x in s.transfers:
        if x.tensor in producer and x.start < s.ends[producer[x.tensor]] - EPS:
            raise PartitionInvalid(f"tensor {x.tensor} is sent before it exists")
        busy.setdefault(("link", x.source, x.dest), []).append((x.start, x.end))
    for key, spans in busy.items():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            if start < end - EPS:
                raise PartitionInvalid(f"{key[0]} {key[1:]} does two things at once")
