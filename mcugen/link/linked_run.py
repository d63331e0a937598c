"""Run a partitioned model on its boards' QEMU twins, one firmware per board (link/multiboard.py).

The segments run in run order; a segment is a phase of its board's program: the host delivers
the phase's inputs, invokes only the phase's operators (INVOKE with an operator range,
`mcu_invoke_nodes`) with the profile on, and reads back the model outputs it made. A tensor an
earlier phase of the same board made stays in that board's arena. A tensor from another board
crosses one of two ways (`links`):
- "uart" (default): board to board. Both twins were built with link UARTs (`Target.links`);
  a `Wire` joins the producer's and the consumer's, and the firmware moves the tensor as
  acknowledged DATA frames (runtime_c/app/link.c, link/links.py). The host only starts both
  ends and compares their CRCs. `faults` damages frames on chosen links (tests): the run then
  recovers by resending, or fails with a `RunError` naming the link, never with a wrong tensor.
- "host": the host reads it from the producer's twin and writes it to the consumer's.
Model inputs come from the host, written once to every board that reads them.
A board's twin starts at its first phase and stops once its last phase has run and every board
that needs one of its tensors has it; idle twins poll their UARTs, so at most the boards still
needed run at once. Every byte is counted on its link (producer -> consumer, host -> board,
board -> host) once per tensor and receiving board, as the partition's model counts it; what a
later phase reads from an earlier one of its board is counted as kept.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from mcugen.errors import RunError
from mcugen.firmware.sizes import firmware_sizes
from mcugen.link.device_run import QEMU_INSTRUCTIONS_PER_SECOND, check_info, open_device
from mcugen.link.links import Fault, Wire, link_slot, listeners, transfer
from mcugen.link.multiboard import Firmware, Link, RelayRun, TwinRun
from mcugen.link.protocol import DeviceLink
from mcugen.model.ir import DTYPES, Graph
from mcugen.plan.partition import HOST
from mcugen.plan.partition.segments import BoardProgram, Segment

LINK_MODES = ("uart", "host")


@dataclass
class LiveTwin:
    prog: BoardProgram
    fw: Firmware
    dev: DeviceLink
    ports: list[int]
    stack: contextlib.ExitStack
    cycle_hz: int = 0
    arena_bytes: int = 0
    delivered: set[int] = field(default_factory=set)


def start_twin(prog: BoardProgram, fw: Firmware) -> LiveTwin:
    stack = contextlib.ExitStack()
    try:
        socks = [stack.enter_context(s) for s in listeners(fw.target.links)]
        dev = stack.enter_context(open_device(fw.target, fw.result.executable, None, serials=socks))
        info = dev.info()
        check_info(info.input_bytes, info.output_bytes, fw.gen.graph, dev.name)
    except BaseException:
        stack.close()
        raise
    ports = [int(s.getsockname()[1]) for s in socks]
    return LiveTwin(prog, fw, dev, ports, stack, info.cycle_hz, info.arena_bytes)


class Crossings:
    """How tensors cross between boards (module docstring), and what crossed each link."""

    def __init__(self, mode: str, faults: Mapping[Link, Sequence[Fault]]) -> None:
        if mode not in LINK_MODES:
            raise ValueError(f"unknown link mode {mode!r}")
        if faults and mode != "uart":
            raise ValueError("faults are injected on board-to-board links only")
        self.mode, self.faults = mode, faults
        self.wires: dict[Link, Wire] = {}  # by (lower board, higher board)
        self.wire_bytes: dict[Link, int] = {}
        self.resends: dict[Link, int] = {}
        self.xfer = 0

    def carry(self, graph: Graph, t: int, src: LiveTwin, dst: LiveTwin) -> None:
        a, b = src.prog.board, dst.prog.board
        if self.mode == "host":
            tensor = graph.tensors[t]
            raw = src.dev.read_output(src.prog.outputs.index(t), tensor.nbytes)
            dst.dev.write_input(dst.prog.inputs.index(t), raw)
            return
        lo, hi = (src, dst) if a < b else (dst, src)
        pair = (lo.prog.board, hi.prog.board)
        if pair not in self.wires:  # one cable per pair of boards, both directions
            self.wires[pair] = Wire(
                f"board {pair[0]} <-> board {pair[1]}",
                (lo.ports[link_slot(*pair)], hi.ports[link_slot(pair[1], pair[0])]),
                (self.faults.get(pair, ()), self.faults.get((pair[1], pair[0]), ())),
            )
        self.xfer += 1
        sent, _ = transfer(
            src.dev,
            link_slot(a, b),
            src.prog.outputs.index(t),
            dst.dev,
            link_slot(b, a),
            dst.prog.inputs.index(t),
            self.xfer,
            link_name=f"board {a} -> board {b}",
            tensor=graph.tensors[t].name or f"#{t}",
        )
        add(self.resends, (a, b), sent.resends)

    def close_twin(self, twin: LiveTwin) -> None:
        for (a, b), wire in list(self.wires.items()):
            if twin.prog.board in (a, b):
                wire.close()
                add(self.wire_bytes, (a, b), wire.directions[0].nbytes)
                add(self.wire_bytes, (b, a), wire.directions[1].nbytes)
                del self.wires[(a, b)]
        twin.stack.close()


def add(counts: dict[Link, int], link: Link, nbytes: int) -> None:
    counts[link] = counts.get(link, 0) + nbytes


def last_needed(segments: Sequence[Segment]) -> dict[int, int]:
    """Board -> the run position after which its twin is no longer needed."""
    producer = {t: s.board for s in segments for t in s.outputs}
    last: dict[int, int] = {}
    for s in segments:
        last[s.board] = max(last.get(s.board, 0), s.index)
        for t in s.inputs:
            if t in producer and producer[t] != s.board:
                last[producer[t]] = max(last.get(producer[t], 0), s.index)
    return last


def run_partition(
    graph: Graph,
    segments: Sequence[Segment],
    programs: Sequence[BoardProgram],
    firmware: Sequence[Firmware],
    sample: Sequence[np.ndarray],
    *,
    links: str = "uart",
    faults: Mapping[Link, Sequence[Fault]] | None = None,
) -> RelayRun:
    """Run the partition on its twins (module docstring): outputs, each phase's twin run, bytes
    per link and kept per board; with `links="uart"` also the bytes on each wire (framing,
    acknowledgements and resends included) and the frames resent per link."""
    start = time.perf_counter()
    program = {p.board: (p, fw) for p, fw in zip(programs, firmware, strict=True)}
    producer = {t: s.board for s in segments for t in s.outputs}
    last = last_needed(segments)
    values: dict[int, np.ndarray] = dict(zip(graph.inputs, sample, strict=True))
    link_bytes: dict[Link, int] = {}
    kept: dict[int, int] = {}
    cross = Crossings(links, faults or {})
    live: dict[int, LiveTwin] = {}
    runs: list[TwinRun] = []
    try:
        for seg in segments:
            if seg.board not in live:
                live[seg.board] = start_twin(*program[seg.board])
            twin = live[seg.board]
            for t in seg.inputs:
                nbytes = graph.tensors[t].nbytes
                if producer.get(t) == seg.board:
                    kept[seg.board] = kept.get(seg.board, 0) + nbytes
                elif t in twin.delivered:
                    continue
                elif t in producer:
                    cross.carry(graph, t, live[producer[t]], twin)
                    add(link_bytes, (producer[t], seg.board), nbytes)
                else:
                    twin.dev.write_input(twin.prog.inputs.index(t), values[t].tobytes())
                    add(link_bytes, (HOST, seg.board), nbytes)
                twin.delivered.add(t)
            runs.append(run_phase(twin, seg, graph, values))
            for t in seg.outputs:
                if t in graph.outputs:
                    add(link_bytes, (seg.board, HOST), graph.tensors[t].nbytes)
            for board in [b for b in live if last[b] <= seg.index]:
                cross.close_twin(live.pop(board))
    finally:
        for twin in live.values():
            cross.close_twin(twin)
    missing = [t for t in graph.outputs if t not in values]
    if missing:
        raise AssertionError(f"no board produced model outputs {missing}: a bug in mcugen")
    return RelayRun(
        tuple(segments),
        tuple(runs),
        [values[t] for t in graph.outputs],
        MappingProxyType(dict(sorted(link_bytes.items()))),
        MappingProxyType(dict(sorted(kept.items()))),
        time.perf_counter() - start,
        links_mode=links,
        wire_bytes=MappingProxyType(dict(sorted(cross.wire_bytes.items()))),
        resends=MappingProxyType(dict(sorted(cross.resends.items()))),
    )


def run_phase(twin: LiveTwin, seg: Segment, graph: Graph, values: dict[int, np.ndarray]) -> TwinRun:
    """Invoke the twin's phase for `seg` with the profile on; read the model outputs it made
    into `values`; its instructions, per original operator too."""
    prog, fw, dev = twin.prog, twin.fw, twin.dev
    first, end = prog.phase_range(prog.segments.index(seg.index))
    res = dev.invoke(1, profile=True, nodes=(first, end))
    if res.status != 0:
        raise RunError(
            f"inference failed on board {seg.board}: status {res.status} at operator "
            f"{res.failed_node}",
            where=dev.name,
        )
    node_ticks = dev.profile(len(prog.ops))
    for t in seg.outputs:
        if t in graph.outputs:
            tensor = graph.tensors[t]
            raw = dev.read_output(prog.outputs.index(t), tensor.nbytes)
            values[t] = np.frombuffer(raw, DTYPES[tensor.dtype][0]).reshape(tensor.shape).copy()

    def instructions(ticks: int) -> int:
        return ticks * QEMU_INSTRUCTIONS_PER_SECOND // twin.cycle_hz

    sizes = firmware_sizes(fw.result.executable, fw.target)
    per_op = {fw.ops[k]: instructions(node_ticks[k]) for k in range(first, end)}
    return TwinRun(
        [],
        instructions(res.ticks),
        MappingProxyType(per_op),
        twin.arena_bytes,
        sizes.flash_bytes,
        sizes.ram_bytes,
    )
