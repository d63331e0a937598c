"""The training graph of a model (the package docstring gives the steps).

`build_training_graph` is pure: a model graph and options in, a `TrainingGraph` out. Complexity
O(operators + tensors). Weaknesses: one model output, batch-1 activations as the model has them,
and only the operators `gradients.py` knows (others are a one-line error naming the operator).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mcugen.errors import McugenError, UnsupportedError
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.train.builder import Parameter, TrainBuilder, dequantized
from mcugen.train.options import WEIGHTED, TrainOptions, parse_trainable


@dataclass(frozen=True)
class TrainingGraph:
    model: Graph
    # inputs: the model's, then the label and `apply`; outputs: the loss, and with
    # cross-entropy the logits it reads (the prediction before this sample's update)
    graph: Graph
    forward: Graph  # the model with its float part, the parameters as variables
    forward_float_ops: tuple[int, ...]  # the float part's operators in `forward`
    params: tuple[Parameter, ...]
    trainable: tuple[int, ...]  # model operators whose weights train
    float_ops: tuple[int, ...]  # model operators that run in float32
    loss: str  # "cross_entropy" or "mse"
    options: TrainOptions

    @property
    def label(self) -> int:
        return self.graph.inputs[-2]

    @property
    def apply(self) -> int:
        return self.graph.inputs[-1]


def float_region(model: Graph, trainable: tuple[int, ...]) -> tuple[int, ...]:
    """The trainable operators and every operator that reads, directly or not, what they write."""
    tainted: set[int] = set()
    region = []
    for op in model.operators:
        if op.index in trainable or any(t in tainted for t in op.inputs if t >= 0):
            region.append(op.index)
            tainted.update(op.outputs)
    return tuple(region)


def build_training_graph(model: Graph, options: TrainOptions) -> TrainingGraph:
    trainable = parse_trainable(model, options.trainable)
    region = float_region(model, trainable)
    if len(model.outputs) != 1:
        raise UnsupportedError(
            f"training needs a model with one output; this one has {len(model.outputs)}"
        )
    b = TrainBuilder(list(model.tensors))
    floats = _forward(model, b, region, trainable)
    forward_ops = list(b.forward_ops)
    loss, logits, head = _loss_of(model, region, floats, options)
    if head is not None:  # the final SOFTMAX: in the forward graph, not in the training graph
        b.forward_ops.remove(head)
    label, apply, loss_tensor, grad = _add_loss(b, loss, logits, head)
    from mcugen.train.gradients import backward  # gradients.py builds on this module

    optimiser = Optimiser(apply, _optimiser_state(b, floats.params, options), options)
    param_grads = backward(b, floats, {logits: grad}, skip=head, optimiser=optimiser)
    _add_updates(b, floats.params, param_grads, optimiser)
    graph, remap = compact(
        model.name + ".train",
        b.tensors,
        b.forward_ops + b.train_ops,
        tuple(model.inputs) + (label, apply),
        (loss_tensor,) + ((logits,) if loss == "cross_entropy" else ()),
        sha256=_identity(model, trainable, options),
    )
    outputs = tuple(floats.map.get(t, t) for t in model.outputs)
    forward, fremap = compact(model.name, b.tensors, forward_ops, tuple(model.inputs), outputs)
    placed = tuple(
        replace(
            p,
            tensor=remap[p.tensor],
            forward_tensor=fremap[p.tensor],
            accumulator=remap[acc] if acc >= 0 else -1,
            momentum=remap[mom] if mom >= 0 else -1,
        )
        for p, (acc, mom) in ((p, optimiser.state[p.tensor]) for p in floats.params)
    )
    converted = {id(op) for op in floats.ops.values()}
    float_ops = tuple(i for i, op in enumerate(forward_ops) if id(op) in converted)
    return TrainingGraph(model, graph, forward, float_ops, placed, trainable, region, loss, options)


def _loss_of(
    model: Graph, region: tuple[int, ...], floats: FloatPart, options: TrainOptions
) -> tuple[str, int, Operator | None]:
    """(loss, the float tensor it reads, the final SOFTMAX's float operator it replaces)."""
    out = model.outputs[0]
    producer = model.producers().get(out)
    if producer is None or producer not in region:
        raise McugenError(
            "no trainable operator reaches the model's output",
            hint="choose operators the output depends on, such as --trainable last:1",
        )
    op = model.operators[producer]
    loss = options.loss
    if loss == "auto":
        loss = "cross_entropy" if op.opcode == "SOFTMAX" else "mse"
    if loss == "mse":
        return loss, floats.map[out], None
    if op.opcode != "SOFTMAX":
        raise McugenError(
            f"cross-entropy needs the model to end in SOFTMAX; it ends in {op.label}",
            hint="--loss mse trains a regressor on the output as it is",
        )
    return loss, floats.map[op.inputs[0]], floats.ops[producer]


def _add_loss(
    b: TrainBuilder, loss: str, logits: int, head: Operator | None
) -> tuple[int, int, int, int]:
    """The label and `apply` inputs and the loss operator: (label, apply, loss, its gradient)."""
    pred = b.tensors[logits]
    loss_tensor = b.tensor((1,), "float32", "loss")
    apply = b.tensor((1,), "int32", "apply")
    grad = b.like(logits, "grad")
    if loss == "cross_entropy":
        classes = pred.shape[-1] if pred.shape else 1
        label = b.tensor((pred.num_elements // classes,), "int32", "label")
        beta = float(head.options.get("beta", 1.0)) if head is not None else 1.0
        code = "McugenSoftmaxCrossEntropy"
        b.operator("CUSTOM", [logits, label], [loss_tensor, grad], custom=code, beta=beta)
    else:
        label = b.tensor(pred.shape, "float32", "target")
        b.operator("CUSTOM", [logits, label], [loss_tensor, grad], custom="McugenMeanSquaredError")
    return label, apply, loss_tensor, grad


#: A parameter's gradient entry when its backward kernel applies the update itself.
UPDATED_IN_PLACE = -1


@dataclass(frozen=True)
class Optimiser:
    """The update's operands: the `apply` input, each parameter's (sum, momentum) variables
    (-1: not kept) and the options."""

    apply: int
    state: dict[int, tuple[int, int]]
    options: TrainOptions

    def fused_inputs(self, param: int) -> list[int]:
        """The inputs a backward kernel that updates `param` itself takes after its own."""
        acc, mom = self.state[param]
        return [acc, mom, self.apply]

    def fused_options(self) -> dict[str, Any]:
        o = self.options
        return {
            "update_w": True,
            "learning_rate": o.learning_rate,
            "momentum": o.momentum,
            "weight_decay": o.weight_decay,
        }


def _optimiser_state(
    b: TrainBuilder, params: list[Parameter], options: TrainOptions
) -> dict[int, tuple[int, int]]:
    """Each parameter's (sum, momentum) variables, -1 when not kept."""
    state = {}
    for p in params:
        w = b.tensors[p.tensor]
        acc = mom = -1
        if options.accumulate > 1:
            acc = b.tensor(w.shape, "float32", f"{w.name}/sum", variable=True)
        if options.momentum > 0:
            mom = b.tensor(w.shape, "float32", f"{w.name}/momentum", variable=True)
        state[p.tensor] = (acc, mom)
    return state


def _add_updates(
    b: TrainBuilder, params: list[Parameter], grads: dict[int, int], optimiser: Optimiser
) -> None:
    """One McugenSgd per parameter that its backward kernel does not update itself."""
    for p in params:
        if grads[p.tensor] == UPDATED_IN_PLACE:
            continue
        acc, mom = optimiser.state[p.tensor]
        b.operator(
            "CUSTOM",
            [p.tensor, grads[p.tensor], acc, mom, optimiser.apply],
            [],
            custom="McugenSgd",
            learning_rate=optimiser.options.learning_rate,
            momentum=optimiser.options.momentum,
            weight_decay=optimiser.options.weight_decay,
        )


def compact(
    name: str,
    tensors: Sequence[Tensor],
    ops: Sequence[Operator],
    inputs: tuple[int, ...],
    outputs: tuple[int, ...],
    *,
    sha256: str = "",
) -> tuple[Graph, dict[int, int]]:
    """A graph of `ops` with only the tensors they and the inputs and outputs use, renumbered in
    first-use order; returns it and the old -> new tensor indices."""
    remap: dict[int, int] = {}

    def use(t: int) -> int:
        if t < 0:
            return t
        if t not in remap:
            remap[t] = len(remap)
        return remap[t]

    for t in inputs:
        use(t)
    renumbered = []
    for i, op in enumerate(ops):
        renumbered.append(
            replace(
                op,
                index=i,
                inputs=tuple(use(t) for t in op.inputs),
                outputs=tuple(use(t) for t in op.outputs),
                intermediates=tuple(use(t) for t in op.intermediates),
            )
        )
    for t in outputs:
        use(t)
    kept = sorted(remap, key=remap.__getitem__)
    table = tuple(replace(tensors[t], index=remap[t]) for t in kept)
    graph = Graph(
        tensors=table,
        operators=tuple(renumbered),
        inputs=tuple(remap[t] for t in inputs),
        outputs=tuple(remap[t] for t in outputs),
        name=name,
        sha256=sha256,
    )
    return graph, remap


#: The version of the state's layout (the order of its variables), part of the checkpoint tag:
#: 2 since the convolution and dense backward kernels read the optimiser state themselves, which
#: moved the sums and momenta in the state.
STATE_LAYOUT = 2


def _identity(model: Graph, trainable: tuple[int, ...], options: TrainOptions) -> str:
    """The training graph's SHA-256, from what fixes its state: the model, the trained
    operators, the loss, which optimiser state it keeps, the layout's version. It tags
    checkpoints, so that one loads only into the same training (another learning rate may
    resume it)."""
    state = (options.accumulate > 1, options.momentum > 0)
    text = f"{model.sha256}|{trainable}|{options.loss}|{state}|layout {STATE_LAYOUT}"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class FloatPart:
    map: dict[int, int]  # model activation tensor -> its float32 tensor in the float part
    region: tuple[int, ...]
    ops: dict[int, Operator]  # model operator -> its float operator (position in forward_ops)
    params: list[Parameter]
    produced: set[int]  # float tensors written by float-part operators (they carry gradients)


def _forward(
    model: Graph, b: TrainBuilder, region: tuple[int, ...], trainable: tuple[int, ...]
) -> FloatPart:
    """The model's operators in stored order: frozen ones as they are, the float part with
    float32 tensors, DEQUANTIZE where a frozen int8 tensor enters it."""
    fmap: dict[int, int] = {}
    params: list[Parameter] = []
    produced: set[int] = set()
    float_ops: dict[int, Operator] = {}
    for op in model.operators:
        if op.index not in region:
            b.forward_ops.append(op)
            continue
        inputs = []
        for pos, t in enumerate(op.inputs):
            inputs.append(_float_input(model, b, op, pos, t, fmap, trainable, params))
        outputs = []
        for t in op.outputs:
            fmap[t] = b.like(t, "float")
            produced.add(fmap[t])
            outputs.append(fmap[t])
        converted = replace(op, index=-1, inputs=tuple(inputs), outputs=tuple(outputs))
        b.forward_ops.append(converted)
        float_ops[op.index] = converted
    return FloatPart(fmap, region, float_ops, params, produced)


def _float_input(
    model: Graph,
    b: TrainBuilder,
    op: Operator,
    pos: int,
    t: int,
    fmap: dict[int, int],
    trainable: tuple[int, ...],
    params: list[Parameter],
) -> int:
    if t < 0:
        return t
    if t in fmap:
        return fmap[t]
    tensor = model.tensors[t]
    weighted = op.opcode in WEIGHTED and pos in (1, 2)
    if tensor.is_constant and (weighted or tensor.dtype in ("int8", "int16")):
        values = dequantized(tensor)
        if op.index in trainable and weighted:
            var = b.tensor(
                tensor.shape,
                "float32",
                f"{tensor.name}/trained",
                data=values.tobytes(),
                variable=True,
            )
            role = "weights" if pos == 1 else "bias"
            params.append(Parameter(op.index, role, t, var, var))
            return var
        return b.tensor(tensor.shape, "float32", f"{tensor.name}/float", data=values.tobytes())
    if tensor.is_constant or tensor.dtype == "float32":
        return t  # shapes, axes and paddings; float activations of a float model
    if tensor.dtype not in ("int8", "int16"):
        raise UnsupportedError(
            f"{op.label}: input {pos} ({tensor.dtype}) cannot enter the float part of training"
        )
    fmap[t] = b.like(t, "float")
    b.operator("DEQUANTIZE", [t], [fmap[t]], forward=True)
    return fmap[t]
