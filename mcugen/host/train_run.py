"""Run a training graph's steps on the host build or on a board (or its twin) and read back the
state it leaves: the loss of every step, the trained variables, and the device's figures."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcugen.boards import Target
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
    gen: Generated, target: Target, elf: Path, port: str | None, steps: list[list[np.ndarray]]
) -> TrainRun:
    """The steps over mcugen's serial protocol (one invoke each), then the variables through
    READ_STATE."""
    from mcugen.host.device_run import open_device, run_samples

    start = time.perf_counter()
    with open_device(target, elf, None if target.emulate else port) as link:
        run = run_samples(link, gen.graph, steps, emulated=target.emulate)
        state = b"".join(
            link.read_state(i, v.nbytes) for i, v in enumerate(gen.view_model.variables)
        )
    losses = [float(out[0].reshape(-1)[0]) for out in run.outputs]
    return TrainRun(
        losses,
        variables(gen.view_model, gen.graph, state),
        time.perf_counter() - start,
        run.unit,
        tuple(run.instructions(t) for t in run.ticks_per_inference),
        run.stack_used,
        run.stack_bytes,
    )
