"""Run a training graph's steps on the host build or on a board (or its twin) and read back the
state it leaves: the loss of every step, the trained variables, and the device's figures."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mcugen.boards import Target
from mcugen.errors import RunError
from mcugen.host.protocol import CHECKPOINT_STATUS, DeviceLink
from mcugen.model.ir import Graph
from mcugen.pipeline import Generated
from mcugen.train.steps import variables


@dataclass(frozen=True)
class TrainRun:
    losses: list[float]
    state: dict[int, np.ndarray]  # variable tensor of the training graph -> its value
    seconds: float
    unit: str = ""  # "instructions" (QEMU), "cycles" (a board), "" on the host
    per_step: tuple[int, ...] = ()  # instructions or cycles of each step
    stack_used: int = 0
    stack_bytes: int = 0


def train_on_host(gen: Generated, exe: Path, steps: list[list[np.ndarray]]) -> TrainRun:
    from mcugen.host.host_run import run_host

    run = run_host(exe, gen.graph, steps, state=True)
    assert run.state is not None
    losses = [float(out[0].reshape(-1)[0]) for out in run.outputs]
    return TrainRun(losses, variables(gen.view_model, gen.graph, run.state), run.seconds)


def train_on_device(
    gen: Generated,
    target: Target,
    elf: Path,
    port: str | None,
    steps: list[list[np.ndarray]],
    *,
    checkpoint_every: int = 0,
    resume: bool = False,
    storage: Path | None = None,
) -> TrainRun:
    """The steps over mcugen's serial protocol (one invoke each), then the variables through
    READ_STATE. With `resume`, the board first loads its newest valid checkpoint; with
    `checkpoint_every`, it saves one after every that many steps and after the last. `storage`:
    the twin's working directory, where its checkpoint files are."""
    from mcugen.host.device_run import open_device, run_samples

    start = time.perf_counter()
    losses: list[float] = []
    per_step: list[int] = []
    stack_used = stack_bytes = 0
    unit = ""
    every = checkpoint_every or len(steps)
    with open_device(target, elf, None if target.emulate else port, cwd=storage) as link:
        if resume:
            _checkpoint(link, load=True)
        for first in range(0, len(steps), every):
            run = run_samples(
                link, gen.graph, steps[first : first + every], emulated=target.emulate
            )
            losses += [float(out[0].reshape(-1)[0]) for out in run.outputs]
            per_step += [run.instructions(t) for t in run.ticks_per_inference]
            stack_used, stack_bytes, unit = (
                max(stack_used, run.stack_used),
                run.stack_bytes,
                run.unit,
            )
            if checkpoint_every:
                _checkpoint(link, load=False)
        state = b"".join(
            link.read_state(i, v.nbytes) for i, v in enumerate(gen.view_model.variables)
        )
    return TrainRun(
        losses,
        variables(gen.view_model, gen.graph, state),
        time.perf_counter() - start,
        unit,
        tuple(per_step),
        stack_used,
        stack_bytes,
    )


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


#: RAM the mps2 QEMU machines give at 0x20000000 (SSRAM2 and 3: ../shared/notes/qemu.md), where a
#: measuring build may put an arena larger than the board's.
TWIN_RAM = {"mps2-an500": 4 << 20, "mps2-an386": 4 << 20}


def operator_instructions(
    graph: Graph, target: Target, sample: list[np.ndarray], workdir: Path
) -> list[int] | None:
    """Instructions of each operator of `graph` (by operator index) for one sample on the board's
    twin, from a build whose RAM is the QEMU machine's, so that a store-all plan the board
    cannot hold still runs; None when the board has no such twin. The kernels and the core are
    the board's, so the counts are those of the build that follows."""
    from mcugen.host.device_run import open_device, run_samples
    from mcugen.host.project import build
    from mcugen.pipeline import PlanOptions, generate

    size = TWIN_RAM.get(target.machine) if target.emulate else None
    if size is None:
        return None
    wide = replace(target, ram=replace(target.ram, size=size), memories=())
    gen = generate(graph, options=PlanOptions(rewrites=False, core=target.port_board.core))
    elf = build(gen, wide, workdir).executable
    with open_device(wide, elf, None) as link:
        run = run_samples(link, gen.graph, [sample], emulated=True, profile=True)
    costs = [0] * len(graph.operators)
    for step, op in enumerate(gen.plan.order):
        costs[op] = run.instructions(run.node_ticks[step])
    return costs
