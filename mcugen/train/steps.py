"""The samples of a training run, one invoke each, and the state a run leaves, as arrays.

A training graph's inputs are the model's, the label and `apply`: `steps` turns a dataset into
that sequence (epochs over the samples in order; `apply` is the number of samples accumulated
when an update is due, else 0; the last group of a run updates with what it has). `variables`
reads the state bytes (the host's state file, or READ_STATE from a device) back into arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mcugen.codegen.viewmodel import ModelVM
from mcugen.errors import McugenError
from mcugen.model.ir import DTYPES, Graph
from mcugen.train.graph import TrainingGraph


@dataclass(frozen=True)
class Dataset:
    x: np.ndarray  # [samples, *model input shape], the model input's type
    y: np.ndarray  # [samples] int labels, or [samples, *output shape] float targets


def check_dataset(tg: TrainingGraph, data: Dataset, where: str = "") -> None:
    """One clear error for a dataset that does not fit the model: sample shape or type, label
    count, a label outside the classes."""
    graph = tg.graph
    x_t = graph.tensors[graph.inputs[0]]
    label_t = graph.tensors[tg.label]
    if len(graph.inputs) != 3:
        raise McugenError("training takes models with one input", where=where)
    if data.x.ndim < 1 or data.x.shape[0] < 1:
        raise McugenError("the dataset holds no sample", where=where, hint="x: [samples, ...]")
    if tuple(data.x.shape[1:]) != x_t.shape and data.x[0].size != x_t.num_elements:
        raise McugenError(
            f"samples of shape {tuple(data.x.shape[1:])}; the model takes {x_t.shape}",
            where=where,
            hint="x holds [samples, *the model input's shape]",
        )
    if data.x.dtype != np.dtype(DTYPES[x_t.dtype][0]):
        raise McugenError(
            f"samples of type {data.x.dtype}; the model takes {x_t.dtype}",
            where=where,
            hint="quantize the samples with the input's scale and zero point",
        )
    if data.y.shape[0] != data.x.shape[0]:
        raise McugenError(f"{data.y.shape[0]} labels for {data.x.shape[0]} samples", where=where)
    if tg.loss == "cross_entropy":
        classes = _classes(tg)
        labels = data.y.reshape(data.y.shape[0], -1)
        if labels.shape[1] != label_t.num_elements or not np.issubdtype(labels.dtype, np.integer):
            raise McugenError(
                f"labels of shape {tuple(data.y.shape[1:])} and type {data.y.dtype}; want "
                f"{label_t.num_elements} integer class per sample",
                where=where,
            )
        bad = np.flatnonzero((labels < 0) | (labels >= classes))
        if bad.size:
            raise McugenError(
                f"label {int(labels.reshape(-1)[bad[0]])} of sample {bad[0] // labels.shape[1]} "
                f"is outside the model's {classes} classes (0 to {classes - 1})",
                where=where,
            )
    elif data.y[0].size != label_t.num_elements:
        raise McugenError(
            f"targets of shape {tuple(data.y.shape[1:])}; the model's output is {label_t.shape}",
            where=where,
        )


def _classes(tg: TrainingGraph) -> int:
    out = tg.forward.tensors[tg.forward.outputs[0]]
    return out.shape[-1] if out.shape else 1


def steps(tg: TrainingGraph, data: Dataset, epochs: int) -> list[list[np.ndarray]]:
    """Every invoke of the run: [x, label, apply] per sample, `epochs` times over the data."""
    graph = tg.graph
    x_t, label_t = graph.tensors[graph.inputs[0]], graph.tensors[tg.label]
    label_type = DTYPES[label_t.dtype][0]
    group = tg.options.accumulate
    total = epochs * data.x.shape[0]
    result = []
    for k in range(total):
        i = k % data.x.shape[0]
        done = (k + 1) % group == 0 or k + 1 == total
        pending = (k % group) + 1
        apply = np.array([pending if done else 0], dtype=np.int32)
        label = np.asarray(data.y[i]).astype(label_type).reshape(label_t.shape)
        result.append([np.asarray(data.x[i]).reshape(x_t.shape), label, apply])
    return result


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
