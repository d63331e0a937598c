"""What partitioning plans, as plain data: the operators with their costs and tensors, the boards
as numbers, and the serial link between them.

Cost model (every constant with where it comes from; none measured on a multi-board set-up yet):
- An operator's time on a board is its cycles over the board's clock. Its cycles are its
  measured instructions times the board's cycles per instruction when the caller has them (a
  profile of a run on the board's twin), else its multiply-accumulates (mcugen/model/macs.py)
  times the board's cycles per MAC, plus `CYCLES_PER_OUTPUT_BYTE` per byte it writes (the
  element-wise, pooling and copy operators, which have no MACs).
- A tensor sent over a link goes as messages of at most `max_payload` bytes, each with
  `frame_overhead` bytes of protocol framing and `message_latency_s` of turnaround (the
  receiver's reply); every byte on the wire is `bits_per_byte` bits (8N1: start, 8 data,
  stop = 10) at the baud rate. One directed link per ordered pair of boards and per board and the
  host; a link carries one message at a time.
Not modelled: the model state (variable tensors, SVDF and LSTM layers) stays with the operator
that reads it and is counted neither in the arena nor in flash. Nothing here reads board files:
the caller (commands/_partition.py) passes numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.model.macs import operator_macs
from mcugen.plan.buffers import align_up
from mcugen.plan.target import MemoryTarget

#: mcugen's instructions per MAC under QEMU with the optimised kernels: the MLPerf Tiny models and
#: person_detect on the F767 twin, 38.75 M instructions over 30.07 M MACs (benchmarks/
#: instructions.py, README; 2.62 before issue 32's kernels). `run --boards` measures them.
INSTRUCTIONS_PER_MAC = 1.29
#: ... at the F7 boards' assumed one cycle per instruction (board.toml [energy]).
CYCLES_PER_MAC = INSTRUCTIONS_PER_MAC * 1.0
#: Cycles per output byte of an operator without MACs (element-wise with requantisation,
#: pooling, copies): an assumption, a few instructions per int8 element.
CYCLES_PER_OUTPUT_BYTE = 8.0
#: The hint when one operator's tensors exceed every board's RAM.
UNSPLITTABLE = (
    "a partition moves whole operators; page the model through a board's external RAM "
    "(docs/memory-planning.md) or use boards with more RAM"
)
#: The host: the source of the model inputs and the sink of its outputs (link endpoint).
HOST = -1


class PartitionInvalid(AssertionError):
    """A partitioner produced an inconsistent partition: a bug in mcugen, not a user error."""


class PartitionDoesNotFit(McugenError):
    """No partition the strategy found fits the boards' RAM and flash: a user error."""


@dataclass(frozen=True)
class BoardSpec:
    """One board as the partitioner sees it: its memory target (the bytes its arena may use,
    `ram`, and the flash for weights), its clock, and the cost factors of its kernels."""

    memory: MemoryTarget
    clock_hz: int
    cycles_per_mac: float = CYCLES_PER_MAC
    cycles_per_instruction: float = 1.0

    @property
    def name(self) -> str:
        return self.memory.board

    @property
    def ram(self) -> int:
        return self.memory.arena_room

    @property
    def flash(self) -> int:
        return self.memory.flash_size


@dataclass(frozen=True)
class LinkModel:
    """A UART link: `baud` bits per second, 8N1 framing, the protocol's messages."""

    baud: int = 115200
    bits_per_byte: int = 10  # 8N1: a start bit, 8 data bits, a stop bit
    max_payload: int = 507  # data bytes per message (docs/protocol.md: WRITE_INPUT's chunk)
    frame_overhead: int = 12  # A5 5A, cmd, len, crc (7) plus index and offset (5) per message
    message_latency_s: float = 0.0002  # the reply's turnaround per message (assumed)

    @property
    def bytes_per_second(self) -> float:
        return self.baud / self.bits_per_byte

    def messages(self, nbytes: int) -> int:
        return max(1, math.ceil(nbytes / self.max_payload))

    def wire_bytes(self, nbytes: int) -> int:
        """Bytes on the wire for a tensor of `nbytes`: data plus each message's framing."""
        return nbytes + self.messages(nbytes) * self.frame_overhead

    def seconds(self, nbytes: int) -> float:
        """Time to send a tensor of `nbytes` (framing, turnaround and 8N1 counted)."""
        per_message = self.messages(nbytes) * self.message_latency_s
        return self.wire_bytes(nbytes) / self.bytes_per_second + per_message


@dataclass(frozen=True)
class OpNode:
    """One operator: the activation tensors it reads and writes, the constants it reads, its
    MACs, and its seconds on each board (index = board)."""

    index: int
    label: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    weights: tuple[int, ...]
    macs: int
    seconds: tuple[float, ...]

    @property
    def fastest(self) -> float:
        return min(self.seconds)


@dataclass(frozen=True)
class PartitionProblem:
    """Operators in a topological order (the stored one), activation and constant sizes, the
    model inputs (each loaded by the host on the boards that read it, before the inference
    starts) and outputs (sent to the host)."""

    ops: tuple[OpNode, ...]
    tensor_bytes: Mapping[int, int]  # activation tensor -> bytes
    weight_bytes: Mapping[int, int]  # constant tensor -> bytes
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    boards: tuple[BoardSpec, ...]
    link: LinkModel = field(default_factory=LinkModel)
    name: str = ""

    @property
    def n_boards(self) -> int:
        return len(self.boards)

    def producer(self) -> dict[int, int]:
        return {t: op.index for op in self.ops for t in op.outputs}

    def consumers(self) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for op in self.ops:
            for t in op.inputs:
                found.setdefault(t, []).append(op.index)
        return found

    def transfer_seconds(self, tensor: int) -> float:
        return self.link.seconds(self.tensor_bytes[tensor])

    def working_set(self, op: OpNode) -> int:
        """Arena bytes an operator needs at once: its inputs and outputs, 16-byte aligned (a
        floor of any arena of the board that runs it)."""
        return sum(align_up(self.tensor_bytes[t]) for t in {*op.inputs, *op.outputs})


def op_seconds(
    graph: Graph, index: int, board: BoardSpec, instructions: Mapping[int, int] | None
) -> float:
    """The modelled seconds of operator `index` on `board` (module docstring)."""
    op = graph.operators[index]
    if instructions is not None and index in instructions:
        cycles = instructions[index] * board.cycles_per_instruction
    else:
        macs = operator_macs(graph, op)
        written = sum(graph.tensors[t].nbytes for t in op.outputs if t >= 0)
        cycles = macs * board.cycles_per_mac + (0 if macs else written * CYCLES_PER_OUTPUT_BYTE)
    return cycles / board.clock_hz


def partition_problem(
    graph: Graph,
    boards: Sequence[BoardSpec],
    link: LinkModel | None = None,
    *,
    instructions: Mapping[int, int] | None = None,
) -> PartitionProblem:
    """The problem of spreading `graph` (stored order, which a validated model has topological)
    over `boards`; `instructions` are measured instructions per operator index, when known."""
    if not boards:
        raise McugenError("partitioning needs at least one board")
    activations = set(graph.activation_tensors())
    ops = []
    for op in graph.operators:
        reads = [t for t in op.inputs if t >= 0]
        ops.append(
            OpNode(
                index=op.index,
                label=op.label,
                inputs=tuple(sorted({t for t in reads if t in activations})),
                outputs=tuple(sorted({t for t in op.outputs if t >= 0})),
                weights=tuple(sorted({t for t in reads if graph.tensors[t].is_constant})),
                macs=operator_macs(graph, op),
                seconds=tuple(op_seconds(graph, op.index, b, instructions) for b in boards),
            )
        )
    used = {t for op in ops for t in (*op.inputs, *op.outputs)} | set(graph.inputs)
    used |= set(graph.outputs)
    constants = {t for op in ops for t in op.weights}
    return PartitionProblem(
        ops=tuple(ops),
        tensor_bytes=MappingProxyType({t: graph.tensors[t].nbytes for t in sorted(used)}),
        weight_bytes=MappingProxyType({t: graph.tensors[t].nbytes for t in sorted(constants)}),
        inputs=tuple(graph.inputs),
        outputs=tuple(graph.outputs),
        boards=tuple(boards),
        link=link or LinkModel(),
        name=graph.name,
    )
