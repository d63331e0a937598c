"""Run a partition's segments on twins that pass tensors board to board (host/links.py).

As in `multiboard.relay`, the segments run one at a time in run order, each on its own twin of
its board's firmware, built with link UARTs (`Target.links`). The difference is where a tensor
goes between boards: a twin stays up until every segment of another board that needs one of its
outputs has received it, and the tensor crosses a `Wire` between the two twins' link UARTs as
the firmware's acknowledged DATA frames (runtime_c/app/link.c). The host only starts the two ends
and checks their CRCs. The host still writes the model inputs, reads the model outputs, and
carries a tensor between two segments of the same board (a real board would keep it in RAM; it
is counted as kept, as in `relay`).
Idle twins poll their UARTs: at most the twins whose outputs are still awaited run at once.
`faults` damages frames on chosen links (tests): the run then recovers by resending, or fails
with a `RunError` naming the link, never with a wrong tensor.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from mcugen.errors import RunError
from mcugen.host.device_run import QEMU_INSTRUCTIONS_PER_SECOND, check_info, open_device
from mcugen.host.links import Fault, Wire, link_slot, listeners, transfer
from mcugen.host.multiboard import Firmware, Link, RelayRun, TwinRun
from mcugen.host.protocol import DeviceLink
from mcugen.host.sizes import firmware_sizes
from mcugen.model.ir import DTYPES, Graph
from mcugen.plan.partition import HOST
from mcugen.plan.partition.segments import Segment


@dataclass
class LiveTwin:
    seg: Segment
    fw: Firmware
    dev: DeviceLink
    ports: list[int]
    stack: contextlib.ExitStack


def start_twin(seg: Segment, fw: Firmware) -> LiveTwin:
    if fw.target.links == 0:
        raise AssertionError("linked_relay needs firmware built with link UARTs")
    stack = contextlib.ExitStack()
    try:
        socks = [stack.enter_context(s) for s in listeners(fw.target.links)]
        dev = stack.enter_context(open_device(fw.target, fw.result.executable, None, serials=socks))
        info = dev.info()
        check_info(info.input_bytes, info.output_bytes, fw.gen.graph, dev.name)
    except BaseException:
        stack.close()
        raise
    return LiveTwin(seg, fw, dev, [int(s.getsockname()[1]) for s in socks], stack)


class Links:
    """The wires between live twins, and what crossed each board-to-board link."""

    def __init__(self, faults: Mapping[Link, Sequence[Fault]]) -> None:
        self.faults = faults
        self.wires: dict[tuple[int, int], tuple[Wire, Link]] = {}
        self.wire_bytes: dict[Link, int] = {}
        self.resends: dict[Link, int] = {}
        self.xfer = 0

    def wire(self, src: LiveTwin, dst: LiveTwin) -> Wire:
        key = (src.seg.index, dst.seg.index)
        if key not in self.wires:
            a, b = src.seg.board, dst.seg.board
            wire = Wire(
                f"board {a} -> board {b}",
                (src.ports[link_slot(a, b)], dst.ports[link_slot(b, a)]),
                (self.faults.get((a, b), ()), self.faults.get((b, a), ())),
            )
            self.wires[key] = (wire, (a, b))
        return self.wires[key][0]

    def carry(self, graph: Graph, t: int, src: LiveTwin, dst: LiveTwin) -> None:
        a, b = src.seg.board, dst.seg.board
        self.wire(src, dst)
        self.xfer += 1
        sent, _ = transfer(
            src.dev,
            link_slot(a, b),
            src.seg.outputs.index(t),
            dst.dev,
            link_slot(b, a),
            dst.seg.inputs.index(t),
            self.xfer,
            link_name=f"board {a} -> board {b}",
            tensor=graph.tensors[t].name or f"#{t}",
        )
        self.resends[(a, b)] = self.resends.get((a, b), 0) + sent.resends

    def close_twin(self, twin: LiveTwin) -> None:
        for (i, j), (wire, link) in list(self.wires.items()):
            if twin.seg.index in (i, j):
                wire.close()
                self.wire_bytes[link] = self.wire_bytes.get(link, 0) + wire.nbytes
                del self.wires[(i, j)]
        twin.stack.close()


def linked_relay(
    graph: Graph,
    segments: Sequence[Segment],
    firmware: Sequence[Firmware],
    sample: Sequence[np.ndarray],
    *,
    faults: Mapping[Link, Sequence[Fault]] | None = None,
) -> RelayRun:
    """Run the segments in order, tensors between boards over board-to-board links (module
    docstring); bytes per link as `relay` counts them, plus the bytes on each wire (framing,
    acknowledgements and resends included) and the frames resent."""
    start = time.perf_counter()
    producer = {t: s for s in segments for t in s.outputs}
    last_use = {s.index: s.index for s in segments}
    for s in segments:
        for t in s.inputs:
            if t in producer and producer[t].board != s.board:
                last_use[producer[t].index] = s.index
    values: dict[int, np.ndarray] = dict(zip(graph.inputs, sample, strict=True))
    host_links: dict[Link, int] = {}
    kept: dict[int, int] = {}
    links = Links(faults or {})
    live: dict[int, LiveTwin] = {}
    runs: list[TwinRun] = []

    try:
        for seg, fw in zip(segments, firmware, strict=True):
            twin = live[seg.index] = start_twin(seg, fw)
            for k, t in enumerate(seg.inputs):
                src = producer.get(t)
                nbytes = graph.tensors[t].nbytes
                if src is not None and src.board != seg.board:
                    links.carry(graph, t, live[src.index], twin)
                    add(host_links, (src.board, seg.board), nbytes)
                    continue
                if src is None:
                    add(host_links, (HOST, seg.board), nbytes)
                else:
                    kept[seg.board] = kept.get(seg.board, 0) + nbytes
                twin.dev.write_input(k, np.ascontiguousarray(values[t]).tobytes())
            runs.append(invoke_twin(twin, graph, values, segments))
            for t in seg.outputs:
                if t in graph.outputs:
                    add(host_links, (seg.board, HOST), graph.tensors[t].nbytes)
            for index in [i for i in live if last_use[i] <= seg.index]:
                links.close_twin(live.pop(index))
    finally:
        for twin in live.values():
            links.close_twin(twin)
    return RelayRun(
        tuple(segments),
        tuple(runs),
        [values[t] for t in graph.outputs],
        MappingProxyType(dict(sorted(host_links.items()))),
        MappingProxyType(dict(sorted(kept.items()))),
        time.perf_counter() - start,
        links_mode="uart",
        wire_bytes=MappingProxyType(dict(sorted(links.wire_bytes.items()))),
        resends=MappingProxyType(dict(sorted(links.resends.items()))),
    )


def invoke_twin(
    twin: LiveTwin, graph: Graph, values: dict[int, np.ndarray], segments: Sequence[Segment]
) -> TwinRun:
    """Invoke the twin's segment once with the profile on; read back the outputs the host needs
    (model outputs, and tensors a later segment of the same board reads) into `values`."""
    dev, fw, seg = twin.dev, twin.fw, twin.seg
    res = dev.invoke(1, profile=True)
    if res.status != 0:
        raise RunError(
            f"inference failed on board {seg.board}: status {res.status} at operator "
            f"{res.failed_node}",
            where=dev.name,
        )
    info = dev.info()
    node_ticks = dev.profile(info.num_nodes)
    same_board_later = {
        t for s in segments if s.board == seg.board and s.index > seg.index for t in s.inputs
    }
    for i, t in enumerate(seg.outputs):
        if t in graph.outputs or t in same_board_later:
            tensor = graph.tensors[t]
            raw = dev.read_output(i, tensor.nbytes)
            values[t] = np.frombuffer(raw, dtype=DTYPES[tensor.dtype][0]).reshape(tensor.shape)

    def instructions(ticks: int) -> int:
        return ticks * QEMU_INSTRUCTIONS_PER_SECOND // info.cycle_hz

    sizes = firmware_sizes(fw.result.executable, fw.target)
    order = fw.gen.plan.order
    per_op = {fw.ops[order[step]]: instructions(n) for step, n in enumerate(node_ticks)}
    return TwinRun(
        [],
        instructions(res.ticks),
        MappingProxyType(per_op),
        info.arena_bytes,
        sizes.flash_bytes,
        sizes.ram_bytes,
    )


def add(counts: dict[Link, int], link: Link, nbytes: int) -> None:
    counts[link] = counts.get(link, 0) + nbytes
