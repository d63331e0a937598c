"""Run a training graph's steps on the host build or on a board (or its twin) and read back the
state it leaves: the outputs of every step (the loss; the logits with cross-entropy), the trained
variables, and the device's figures. A NaN or infinite loss stops the run (mcugen/train/metrics)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import numpy as np

from mcugen import progress
from mcugen.boards import Target
from mcugen.errors import RunError
from mcugen.link.protocol import CHECKPOINT_STATUS, DeviceLink
from mcugen.model.ir import Graph
from mcugen.pipeline import Generated
from mcugen.train.metrics import SegmentResult, check_losses, losses_of, segment_result
from mcugen.train.steps import Segment, as_segments, variables


@dataclass(frozen=True)
class TrainRun:
    segments: tuple[SegmentResult, ...]  # in the order run: each epoch's, then its held-out
    state: dict[int, np.ndarray]  # variable tensor of the training graph -> its value
    seconds: float
    unit: str = ""  # "instructions" (QEMU), "cycles" (a board), "" on the host
    per_step: tuple[int, ...] = ()  # instructions or cycles of each training step
    stack_used: int = 0
    stack_bytes: int = 0

    @property
    def losses(self) -> list[float]:
        """The loss of every training step, in order (held-out evaluations left out)."""
        return [v for s in self.segments if not s.segment.held_out for v in s.losses]


def train_on_host(
    gen: Generated, exe: Path, run: Sequence[Segment] | Sequence[list[np.ndarray]]
) -> TrainRun:
    """Every segment's steps (`run`: segments, or plain steps as one epoch) in one process; the
    losses are checked after it."""
    from mcugen.link.host_run import run_host

    segments = as_segments(run)
    flat = [step for segment in segments for step in segment.steps]
    with progress.step("training"):
        ran = run_host(exe, gen.graph, flat, state=True)
    assert ran.state is not None
    results, first = [], 0
    for segment in segments:
        result = segment_result(segment, ran.outputs[first : first + len(segment.steps)])
        check_losses(segment, result.losses)
        results.append(result)
        first += len(segment.steps)
    state = variables(gen.view_model, gen.graph, ran.state)
    return TrainRun(tuple(results), state, ran.seconds)


def train_on_device(
    gen: Generated,
    target: Target,
    elf: Path,
    port: str | None,
    run: Sequence[Segment] | Sequence[list[np.ndarray]],
    *,
    checkpoint_every: int = 0,
    resume: bool = False,
    storage: Path | None = None,
) -> TrainRun:
    """The steps of `run` (segments, or plain steps as one epoch) over mcugen's serial protocol
    (one invoke each), then the variables through READ_STATE. With `resume`, the board first
    loads its newest valid checkpoint; with `checkpoint_every`, it saves one after every that
    many training steps and after the last (held-out evaluations do not count). `storage`: the
    twin's working directory, where its checkpoint files are. The losses are checked after each
    chunk of steps, before its checkpoint: a run stops at the first chunk with a NaN or
    infinite loss and saves no checkpoint after it (the one before may hold the update that
    diverged, which only the next step's loss shows)."""
    from mcugen.link.device_run import open_device

    segments = as_segments(run)
    start = time.perf_counter()
    total = sum(len(s.steps) for s in segments if not s.held_out)
    epochs = max((s.epoch for s in segments), default=0)
    tally = _Tally(checkpoint_every or total, total, checkpoint_every > 0, epochs=epochs)
    with (
        progress.step("training"),
        open_device(target, elf, None if target.emulate else port, cwd=storage) as link,
    ):
        if resume:
            _checkpoint(link, load=True)
        results = tuple(_run_segment(link, gen, target, s, tally) for s in segments)
        state = b"".join(
            link.read_state(i, v.nbytes) for i, v in enumerate(gen.view_model.variables)
        )
    return TrainRun(
        results,
        variables(gen.view_model, gen.graph, state),
        time.perf_counter() - start,
        tally.unit,
        tuple(tally.per_step),
        tally.stack_used,
        tally.stack_bytes,
    )


@dataclass
class _Tally:
    """What `train_on_device` counts across segments: training steps done, checkpoints due,
    the device's figures."""

    every: int
    total: int
    saves: bool
    done: int = 0
    epochs: int = 0
    unit: str = ""
    per_step: list[int] = field(default_factory=list)
    stack_used: int = 0
    stack_bytes: int = 0


def _run_segment(
    link: DeviceLink, gen: Generated, target: Target, segment: Segment, tally: _Tally
) -> SegmentResult:
    """One segment's steps, in chunks that end where a checkpoint is due."""
    from mcugen.link.device_run import run_samples

    outputs: list[list[np.ndarray]] = []
    whole = [(0, len(segment.steps))]
    for first, last in whole if segment.held_out else _chunks(len(segment.steps), tally):
        steps, label = segment.steps[first:last], partial(_where, segment, tally.epochs, first)
        chunk = run_samples(link, gen.graph, steps, emulated=target.emulate, label=label)
        check_losses(segment, losses_of(chunk.outputs), first)
        outputs += chunk.outputs
        tally.stack_used = max(tally.stack_used, chunk.stack_used)
        tally.stack_bytes = chunk.stack_bytes
        if segment.held_out:
            continue
        tally.per_step += [chunk.instructions(t) for t in chunk.ticks_per_inference]
        tally.unit, tally.done = chunk.unit, tally.done + last - first
        if tally.saves and (tally.done % tally.every == 0 or tally.done == tally.total):
            _checkpoint(link, load=False)
    return segment_result(segment, outputs)


def _where(segment: Segment, epochs: int, first: int, k: int) -> str:
    """What the progress line says while step (or held-out sample) `first + k` of `segment`
    runs."""
    what = "held-out sample" if segment.held_out else "step"
    return f"epoch {segment.epoch} of {epochs}, {what} {first + k + 1} of {len(segment.steps)}"


def _chunks(length: int, tally: _Tally) -> list[tuple[int, int]]:
    """[first, last) ranges of a training segment of `length` steps, split where a checkpoint
    is due: after every `tally.every` training steps of the run (`tally.done` so far)."""
    bounds, first = [], 0
    while first < length:
        last = min(length, first + tally.every - (tally.done + first) % tally.every)
        bounds.append((first, last))
        first = last
    return bounds


def _checkpoint(link: DeviceLink, *, load: bool) -> int:
    status, sequence = link.checkpoint(load=load)
    if status != 0:
        what = "loading" if load else "saving"
        raise RunError(
            f"{what} a checkpoint failed: {CHECKPOINT_STATUS.get(status, f'status {status}')}",
            where=link.name,
            hint="train without --resume to start from the model's weights" if load else "",
        )
    return sequence


def operator_instructions(
    graph: Graph, target: Target, sample: list[np.ndarray], workdir: Path
) -> list[int] | None:
    """Instructions of each operator of `graph` (by operator index) for one sample on the board's
    twin, from a build whose RAM is the QEMU machine's, so that a store-all plan the board
    cannot hold still runs; None when the board has no such twin. The kernels and the core are
    the board's, so the counts are those of the build that follows."""
    from mcugen.firmware.compile import build
    from mcugen.link.device_run import open_device, run_samples
    from mcugen.options import PlanOptions
    from mcugen.pipeline import generate

    twin_ram = target.port_board.ram  # the QEMU machine's whole RAM (its board.toml)
    if not target.emulate or twin_ram is None:
        return None
    wide = replace(target, ram=replace(target.ram, size=twin_ram.size), memories=())
    gen = generate(graph, options=PlanOptions(rewrites=False, core=target.port_board.core))
    elf = build(gen, wide, workdir).executable
    with open_device(wide, elf, None) as link:
        run = run_samples(link, gen.graph, [sample], emulated=True, profile=True)
    costs = [0] * len(graph.operators)
    for step, op in enumerate(gen.plan.order):
        costs[op] = run.instructions(run.node_ticks[step])
    return costs
