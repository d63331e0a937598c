"""What to train and how: the trainable operators and the optimiser's settings."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mcugen.errors import McugenError
from mcugen.model.ir import Graph

#: Operators whose weights can be trained (their input 1 is the weights, input 2 the bias).
WEIGHTED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
LOSSES = ("auto", "cross_entropy", "mse")


@dataclass(frozen=True)
class TrainOptions:
    """`trainable`: "last:K" (the last K weighted operators), "all" (every weighted operator), or
    comma-separated operator indices. `loss`: "auto" is cross-entropy when the model ends in
    SOFTMAX, else the mean squared error. `accumulate`: samples whose gradients are averaged per
    update (batch size 1 with gradient accumulation)."""

    trainable: str = "last:1"
    loss: str = "auto"
    learning_rate: float = 0.01
    momentum: float = 0.0
    weight_decay: float = 0.0
    accumulate: int = 1

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise McugenError(
                f"unknown loss '{self.loss}'; choose one of {', '.join(LOSSES)}",
                hint="--loss cross_entropy for a classifier, mse for a regressor",
            )
        for name in ("learning_rate", "momentum", "weight_decay"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise McugenError(f"--{name.replace('_', '-')} {value} must be finite, >= 0")
        if self.momentum >= 1:
            raise McugenError(f"--momentum {self.momentum} must be below 1")
        if not 1 <= self.accumulate <= 65535:
            raise McugenError(f"--accumulate {self.accumulate} must be 1 to 65535 samples")


def weighted_operators(graph: Graph) -> list[int]:
    """Operators with constant weights, in stored order."""
    return [
        op.index
        for op in graph.operators
        if op.opcode in WEIGHTED
        and len(op.inputs) > 1
        and op.inputs[1] >= 0
        and graph.tensors[op.inputs[1]].is_constant
    ]


def parse_trainable(graph: Graph, text: str) -> tuple[int, ...]:
    """The operator indices `text` names, sorted; an error line for a spec that names nothing,
    an index past the model, or an operator without weights."""
    weighted = weighted_operators(graph)
    hint = f"weighted operators of this model: {', '.join(map(str, weighted)) or 'none'}"
    spec = text.strip()
    if spec == "all":
        chosen = list(weighted)
    elif spec.startswith("last:"):
        count = spec[5:]
        if not count.isdigit() or int(count) < 1:
            raise McugenError(f"--trainable {text}: want last:K with K >= 1", hint=hint)
        if int(count) > len(weighted):
            raise McugenError(
                f"--trainable {text}: the model has {len(weighted)} weighted operators", hint=hint
            )
        chosen = weighted[-int(count) :]
    else:
        chosen = []
        for part in spec.split(","):
            if not part.strip().isdigit():
                raise McugenError(
                    f"--trainable {text}: '{part}' is not an operator index",
                    hint="last:K, all, or operator indices such as 9,11",
                )
            index = int(part)
            if index >= len(graph.operators):
                raise McugenError(
                    f"--trainable {text}: operator {index} is past the model's "
                    f"{len(graph.operators)} operators",
                    hint=hint,
                )
            if index not in weighted:
                op = graph.operators[index]
                raise McugenError(
                    f"--trainable {text}: {op.label} has no weights to train", hint=hint
                )
            chosen.append(index)
    if not chosen:
        raise McugenError(f"--trainable {text}: no operator to train", hint=hint)
    return tuple(sorted(set(chosen)))
