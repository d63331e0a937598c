"""What a training run's invokes returned, and the figures a user reads from them.

The training graph outputs each step's loss and, with cross-entropy, the logits that loss read:
the prediction made before that sample's update. An epoch's loss is the mean of its steps'
losses and its accuracy the share of its labels that the argmax of those logits matched (the
running figures Keras prints); held-out data, run with `apply` 0, gives the loss and accuracy of
the weights at the end of the epoch. A loss or a trained weight that is NaN or infinite stops the
run with one error line: a model is written only from finite weights.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mcugen.errors import McugenError
from mcugen.train.graph import TrainingGraph
from mcugen.train.steps import Segment

DIVERGED_HINT = "nothing written; lower --lr, or scale x to values of order 1"


@dataclass(frozen=True)
class SegmentResult:
    """The outputs of a segment's invokes: each one's loss, and its logits (cross-entropy)."""

    segment: Segment
    losses: tuple[float, ...]
    logits: tuple[np.ndarray, ...]


def losses_of(outputs: Sequence[Sequence[np.ndarray]]) -> list[float]:
    """Each invoke's loss, the training graph's first output."""
    return [float(out[0].reshape(-1)[0]) for out in outputs]


def segment_result(segment: Segment, outputs: Sequence[Sequence[np.ndarray]]) -> SegmentResult:
    """From each invoke's outputs, in the training graph's order: the loss, then the logits."""
    logits = tuple(np.asarray(out[1]) for out in outputs if len(out) > 1)
    return SegmentResult(segment, tuple(losses_of(outputs)), logits)


def check_losses(segment: Segment, losses: Sequence[float], first: int = 0) -> None:
    """An error line at the first NaN or infinite loss; `losses` start at step `first`."""
    bad = next((k for k, value in enumerate(losses) if not math.isfinite(value)), None)
    if bad is None:
        return
    step, value = first + bad, losses[bad]
    where = f"{segment.source}, x[{step}]" if segment.source else f"x[{step}]"
    if segment.held_out:
        what = f"the held-out loss after epoch {segment.epoch} is {value}"
    else:
        what = f"the loss of epoch {segment.epoch}, step {step + 1}, is {value}"
    raise McugenError(f"training diverged: {what}", where=where, hint=DIVERGED_HINT)


def check_trained(tg: TrainingGraph, state: dict[int, np.ndarray]) -> None:
    """An error line when a trained parameter holds NaN or an infinity after the run."""
    for p in tg.params:
        values = state[p.tensor]
        bad = int(np.count_nonzero(~np.isfinite(values)))
        if bad:
            op = tg.model.operators[p.op]
            raise McugenError(
                f"training diverged: {bad} of the {values.size} trained values of "
                f"{op.label}'s {p.role} are NaN or infinite after the last step",
                hint=DIVERGED_HINT,
            )


@dataclass(frozen=True)
class EpochFigures:
    """One epoch's figures; accuracies are None without classes (mean squared error), held-out
    ones without held-out data or when it was not evaluated after this epoch."""

    epoch: int
    loss: float
    accuracy: float | None
    held_out_loss: float | None = None
    held_out_accuracy: float | None = None


def epoch_figures(results: Sequence[SegmentResult]) -> list[EpochFigures]:
    """Each epoch's figures from its training segment and its held-out one, if any."""
    trained = {r.segment.epoch: r for r in results if not r.segment.held_out}
    held_out = {r.segment.epoch: r for r in results if r.segment.held_out}
    figures = []
    for epoch in sorted(trained):
        r, h = trained[epoch], held_out.get(epoch)
        figures.append(
            EpochFigures(
                epoch,
                float(np.mean(r.losses)),
                _accuracy(r),
                float(np.mean(h.losses)) if h is not None else None,
                _accuracy(h) if h is not None else None,
            )
        )
    return figures


def _accuracy(result: SegmentResult) -> float | None:
    """The share of the segment's labels that the argmax of their logits matched."""
    if not result.logits:
        return None
    right = total = 0
    for step, logits in zip(result.segment.steps, result.logits, strict=True):
        labels = step[1].reshape(-1)
        predicted = logits.reshape(-1, logits.shape[-1]).argmax(axis=1)
        right += int(np.count_nonzero(predicted == labels))
        total += labels.size
    return right / total
