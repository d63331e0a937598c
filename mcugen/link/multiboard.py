"""Firmware for a model partitioned over several boards, and what their runs report.

Each board's part of the partition (a `BoardProgram`, plan/partition/segments.py: its segments
as one sub-model run phase by phase) is planned, rendered and built by the usual pipeline for
its board's target (mixed boards work) into one firmware image; link/linked_run.py runs them.

Sub-models are planned without graph rewrites (`PlanOptions.rewrites`), so each firmware runs
exactly the partition's operators and the profile gives every original operator's
instructions; the single-board reference run uses the same options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from mcugen.boards import Target
from mcugen.errors import McugenError
from mcugen.firmware.compile import BuildResult, build
from mcugen.firmware.sizes import firmware_sizes
from mcugen.link.device_run import open_device, run_samples
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan.partition.segments import BoardProgram, Segment

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
    #: links "uart": bytes each board sent to another on its link UART (the TX line a -> b:
    #: DATA frames of a's tensors and ACKs of b's, framing and resends included), and the
    #: DATA frames resent per link
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


def build_boards(
    programs: Sequence[BoardProgram],
    targets: Sequence[Target],
    options_for: Callable[[Target], PlanOptions],
    workdir: Path,
) -> list[Firmware]:
    """Every board's firmware (its `BoardProgram`), for its target, all built before any twin
    starts. The plan keeps the program's operator order (the phases are ranges of it)."""
    found = []
    for prog in programs:
        target = replace(targets[prog.board], multiboard=True)  # INVOKE runs one phase
        options = replace(options_for(target), order="stored")
        fw = build_firmware(prog.graph, prog.ops, target, options, workdir / f"board{prog.board}")
        if tuple(fw.gen.plan.order) != tuple(range(len(prog.ops))):
            raise AssertionError(f"board {prog.board}: the plan reordered its phases")
        found.append(fw)
    return found


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
        from mcugen.link.host_run import run_host

        fw = host()
        outputs = run_host(fw.result.executable, fw.gen.graph, [list(sample)]).outputs[0]
        return outputs, "mcugen's host build"


def outputs_equal(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    """Bit for bit: same dtypes, shapes and bytes."""
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        for x, y in zip(a, b, strict=True)
    )
