"""Run one model partitioned over several boards' QEMU twins, the host relaying the tensors.

The partition's segments (plan/partition/segments.py) are ordinary sub-models: each is planned,
rendered and built by the usual pipeline for its board's target (mixed boards work) and runs the
usual firmware and protocol. The host then walks the segments in run order: it starts the
segment's twin, writes its inputs (model inputs from the host, tensors from the segments that
produced them), invokes it once with the per-operator profile on, reads its outputs, and stops
the twin. Only one twin runs at a time: an idle twin polls its UART at full speed, so N idle
twins would take N cores for nothing, and the host relays one transfer at a time anyway.
Every byte relayed is counted on its link (producer board -> consumer board, host -> board,
board -> host) once per tensor and receiving board, as the partition's link model counts it; a
tensor a board's later segment reads from its earlier one is counted as kept on the board.

Sub-models are planned without graph rewrites (`PlanOptions.rewrites`), so each firmware runs
exactly the partition's operators and the profile gives every original operator's
instructions; the single-board reference run uses the same options.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from mcugen.boards import Target
from mcugen.errors import McugenError
from mcugen.host.device_run import open_device, run_samples
from mcugen.host.project import BuildResult, build
from mcugen.host.sizes import firmware_sizes
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.pipeline import Generated, PlanOptions, generate
from mcugen.plan.partition import HOST
from mcugen.plan.partition.segments import Segment

Link = tuple[int, int]


@dataclass(frozen=True)
class Firmware:
    """A built sub-model (or the whole model): what runs on one twin."""

    gen: Generated
    result: BuildResult
    target: Target
    ops: tuple[int, ...]  # original operator of each of its operators


@dataclass(frozen=True)
class TwinRun:
    """One invoke on one twin: its outputs, the twin's instruction count, each original
    operator's instructions (profiled), the arena it reported and the linked firmware's size."""

    outputs: list[np.ndarray]
    instructions: int
    per_op: Mapping[int, int]
    arena_bytes: int
    flash_bytes: int
    ram_bytes: int


@dataclass(frozen=True)
class RelayRun:
    """A partitioned run: each segment's twin run, the model outputs, bytes per link and bytes
    kept on each board between its segments."""

    segments: tuple[Segment, ...]
    runs: tuple[TwinRun, ...]
    outputs: list[np.ndarray]
    link_bytes: Mapping[Link, int]
    kept_bytes: Mapping[int, int]
    seconds: float
    #: board-to-board runs (host/linked_run.py): bytes on each link's wire, both directions,
    #: framing, acknowledgements and resends included; and the frames resent on each link
    #: "host" (the host relays every tensor) or "uart" (board to board over link UARTs)
    links_mode: str = "host"
    wire_bytes: Mapping[Link, int] = field(default_factory=dict)
    resends: Mapping[Link, int] = field(default_factory=dict)

    def board_instructions(self, board: int) -> int:
        return sum(
            r.instructions
            for s, r in zip(self.segments, self.runs, strict=True)
            if s.board == board
        )

    def per_op(self) -> dict[int, int]:
        return {op: n for r in self.runs for op, n in r.per_op.items()}


def unrewritten(options: PlanOptions) -> PlanOptions:
    """`options` without graph rewrites: the firmware runs the partition's operators, one for
    one, so the profile names each original operator (module docstring)."""
    return replace(options, rewrites=False)


def build_firmware(
    graph: Graph, ops: Sequence[int], target: Target, options: PlanOptions, directory: Path
) -> Firmware:
    """Validate `graph` as a model file would be (it goes through mcugen's writer and importer),
    plan, render and build it for `target` into `directory`."""
    checked = import_model(write_model(graph), source=graph.name or "sub-model")
    gen = generate(checked, model_name=graph.name or "model", options=unrewritten(options))
    if len(gen.graph.operators) != len(ops):
        raise AssertionError(f"{graph.name}: the plan changed the operators (rewrites on?)")
    return Firmware(gen, build(gen, target, directory), target, tuple(ops))


def run_twin(fw: Firmware, inputs: Sequence[np.ndarray]) -> TwinRun:
    """Start `fw`'s twin, run `inputs` once with the profile on, stop the twin (reaped on every
    path, Ctrl-C included: qemu.qemu_console)."""
    with open_device(fw.target, fw.result.executable, None) as link:
        run = run_samples(link, fw.gen.graph, [list(inputs)], emulated=True, profile=True)
    per_op = {
        fw.ops[fw.gen.plan.order[step]]: run.instructions(ticks)
        for step, ticks in enumerate(run.node_ticks)
    }
    sizes = firmware_sizes(fw.result.executable, fw.target)
    return TwinRun(
        run.outputs[0],
        run.instructions(run.ticks_per_inference[0]),
        MappingProxyType(per_op),
        run.arena_bytes,
        sizes.flash_bytes,
        sizes.ram_bytes,
    )


def build_segments(
    segments: Sequence[Segment],
    targets: Sequence[Target],
    options_for: Callable[[Target], PlanOptions],
    workdir: Path,
) -> list[Firmware]:
    """Every segment's firmware, for its board's target, all built before any twin starts."""
    return [
        build_firmware(
            s.graph,
            s.ops,
            targets[s.board],
            options_for(targets[s.board]),
            workdir / f"board{s.board}-segment{s.index}",
        )
        for s in segments
    ]


def relay(
    graph: Graph,
    segments: Sequence[Segment],
    firmware: Sequence[Firmware],
    sample: Sequence[np.ndarray],
) -> RelayRun:
    """Run the segments in order on their twins, relaying tensors through the host and counting
    every byte on its link (module docstring)."""
    start = time.perf_counter()
    values: dict[int, np.ndarray] = dict(zip(graph.inputs, sample, strict=True))
    where: dict[int, int] = dict.fromkeys(graph.inputs, HOST)
    links: dict[Link, int] = {}
    kept: dict[int, int] = {}
    delivered: set[tuple[int, int]] = set()
    runs = []
    for seg, fw in zip(segments, firmware, strict=True):
        for t in seg.inputs:
            if (t, seg.board) in delivered:
                continue
            delivered.add((t, seg.board))
            nbytes = graph.tensors[t].nbytes
            if where[t] == seg.board:
                kept[seg.board] = kept.get(seg.board, 0) + nbytes
            else:
                links[(where[t], seg.board)] = links.get((where[t], seg.board), 0) + nbytes
        run = run_twin(fw, [values[t] for t in seg.inputs])
        for t, arr in zip(seg.outputs, run.outputs, strict=True):
            values[t], where[t] = arr, seg.board
            if t in graph.outputs:
                key = (seg.board, HOST)
                links[key] = links.get(key, 0) + graph.tensors[t].nbytes
        runs.append(run)
    missing = [t for t in graph.outputs if t not in values]
    if missing:
        raise AssertionError(f"no segment produced model outputs {missing}: a bug in mcugen")
    return RelayRun(
        tuple(segments),
        tuple(runs),
        [values[t] for t in graph.outputs],
        MappingProxyType(dict(sorted(links.items()))),
        MappingProxyType(dict(sorted(kept.items()))),
        time.perf_counter() - start,
    )


def reference_outputs(
    model: bytes, graph: Graph, sample: Sequence[np.ndarray], host: Callable[[], Firmware]
) -> tuple[list[np.ndarray], str]:
    """What a run is checked against when no single board holds the model: TFLM's outputs
    (tflite_micro) when it is installed, else those of mcugen's build for the host (`host`
    builds it), with the reference's name for the report."""
    from mcugen.reference import tflm_outputs

    try:
        return tflm_outputs(model, graph, [list(sample)])[0], "TFLM (tflite_micro)"
    except McugenError:  # tflite_micro is not installed
        from mcugen.host.host_run import run_host

        fw = host()
        outputs = run_host(fw.result.executable, fw.gen.graph, [list(sample)]).outputs[0]
        return outputs, "mcugen's host build"


def outputs_equal(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    """Bit for bit: same dtypes, shapes and bytes."""
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        for x, y in zip(a, b, strict=True)
    )
