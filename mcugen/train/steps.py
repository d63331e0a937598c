"""The samples of a training run, one invoke each, and the state a run leaves, as arrays.

A training graph's inputs are the model's, the label and `apply`: `steps` turns a dataset into
that sequence (epochs over the samples in order; `apply` is the number of samples accumulated
when an update is due, else 0; the last group of a run updates with what it has).
`run_segments` splits it by epoch and adds the held-out samples' evaluations (`apply` 0).
`variables` reads the state bytes (the host's state file, or READ_STATE from a device) back into
arrays. The data's checks are in `dataset.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mcugen.codegen.vm_types import ModelVM
from mcugen.errors import McugenError
from mcugen.model.ir import DTYPES, Graph
from mcugen.train.graph import TrainingGraph


@dataclass(frozen=True)
class Dataset:
    x: np.ndarray  # [samples, *model input shape], the model input's type
    y: np.ndarray  # [samples] int labels, or [samples, *output shape] float targets


def steps(tg: TrainingGraph, data: Dataset, epochs: int) -> list[list[np.ndarray]]:
    """Every invoke of the run: [x, label, apply] per sample, `epochs` times over the data."""
    group = tg.options.accumulate
    total = epochs * data.x.shape[0]
    result = []
    for k in range(total):
        done = (k + 1) % group == 0 or k + 1 == total
        pending = (k % group) + 1
        result.append(_invoke(tg, data, k % data.x.shape[0], pending if done else 0))
    return result


def _invoke(tg: TrainingGraph, data: Dataset, sample: int, apply: int) -> list[np.ndarray]:
    graph = tg.graph
    x_t, label_t = graph.tensors[graph.inputs[0]], graph.tensors[tg.label]
    label = np.asarray(data.y[sample]).astype(DTYPES[label_t.dtype][0]).reshape(label_t.shape)
    x = np.asarray(data.x[sample]).reshape(x_t.shape)
    return [x, label, np.array([apply], dtype=np.int32)]


@dataclass(frozen=True)
class Segment:
    """Invokes run back to back: epoch `epoch`'s training steps (sample k of the data at step
    k), or, `held_out`, the held-out samples evaluated after that epoch."""

    epoch: int  # from 1
    held_out: bool
    steps: list[list[np.ndarray]]
    source: str = ""  # the data's file, for error lines


def run_segments(
    tg: TrainingGraph,
    data: Dataset,
    epochs: int,
    held_out: Dataset | None = None,
    *,
    sources: tuple[str, str] = ("", ""),
) -> list[Segment]:
    """The run's invokes: each epoch's training steps (`steps`), then the held-out samples
    with `apply` 0. With one sample per update, `apply` 0 changes no variable (no gradient sum
    is kept: mcu/kernels/sgd.h), so they are evaluated after every epoch; with --accumulate
    above 1 they would add their gradients to the sums, so only after the last, when the sums
    are no longer used. `sources`: the files of the data and the held-out data."""
    every = steps(tg, data, epochs)
    count = data.x.shape[0]
    result = []
    for epoch in range(1, epochs + 1):
        chunk = every[(epoch - 1) * count : epoch * count]
        result.append(Segment(epoch, False, chunk, sources[0]))
        if held_out is not None and (held_out_every_epoch(tg) or epoch == epochs):
            evaluations = [_invoke(tg, held_out, i, 0) for i in range(held_out.x.shape[0])]
            result.append(Segment(epoch, True, evaluations, sources[1]))
    return result


def as_segments(run: Sequence[Segment] | Sequence[list[np.ndarray]]) -> list[Segment]:
    """`run` when it is segments; plain steps (a caller that made them with `steps`) as the
    training segment of one epoch."""
    if run and isinstance(run[0], Segment):
        return [s for s in run if isinstance(s, Segment)]
    return [Segment(1, False, [s for s in run if not isinstance(s, Segment)])]


def held_out_every_epoch(tg: TrainingGraph) -> bool:
    """Whether `run_segments` evaluates held-out data after every epoch (else after the last)."""
    return tg.options.accumulate == 1


def variables(vm: ModelVM, graph: Graph, state: bytes) -> dict[int, np.ndarray]:
    """Variable tensor -> its value, from the state bytes in the view-model's variable order."""
    result = {}
    pos = 0
    for v in vm.variables:
        t = graph.tensors[v.tensor]
        chunk = state[pos : pos + v.nbytes]
        if len(chunk) != v.nbytes:
            raise McugenError(f"the state holds {len(state)} bytes; the model's is larger")
        values = np.frombuffer(chunk[: t.nbytes], dtype=DTYPES[t.dtype][0])
        result[v.tensor] = values.reshape(t.shape).copy()
        pos += v.nbytes
    return result
