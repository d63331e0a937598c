"""Backward operators of the float part, one rule per forward opcode.

`backward` walks the float part's operators in reverse stored order. For each operator with a
gradient on an output, its rule adds the operators that compute the gradients of its inputs
(those that carry one: float activations written by the float part) and of its trained
parameters, and returns them; gradients of a tensor read twice are summed with ADD. A rule uses
builtin float32 operators where one computes the gradient (RESHAPE, MUL, ADD) and a backward
kernel (runtime_c/kernels/reference/*_grad.c) otherwise. Pure; O(operators).
"""

from __future__ import annotations

from mcugen.errors import UnsupportedError
from mcugen.model.ir import Operator
from mcugen.train.builder import TrainBuilder
from mcugen.train.graph import FloatPart, Optimiser
from mcugen.train.rules import GRADIENTS, GradContext, load_rules


def backward(
    b: TrainBuilder,
    floats: FloatPart,
    seeds: dict[int, int],
    *,
    skip: Operator | None,
    optimiser: Optimiser,
) -> dict[int, int]:
    """Adds the backward operators from the loss's gradients (`seeds`: tensor -> gradient) and
    returns each trained parameter's gradient tensor (variable -> gradient, or UPDATED_IN_PLACE
    when its backward kernel applies the update itself)."""
    load_rules()
    grads = dict(seeds)
    ctx = GradContext(b, floats.produced, {p.tensor: p for p in floats.params}, {}, optimiser)
    for model_index in reversed(floats.region):
        op = floats.ops[model_index]
        if op is skip:
            continue
        dys = tuple(grads.get(y) for y in op.outputs)
        if all(d is None for d in dys):
            continue
        key = f"CUSTOM:{op.custom_code}" if op.custom_code else op.opcode
        if key not in GRADIENTS:
            raise UnsupportedError(
                f"operator {model_index} ({key}): training through it is not supported yet",
                hint="train only operators after it (--trainable last:K with a smaller K)",
            )
        for t, g in GRADIENTS[key](ctx, op, dys).items():
            if t in grads:
                total = b.like(t, "grad")
                b.operator("ADD", [grads[t], g], [total])
                g = total
            grads[t] = g
    missing = [p for p in floats.params if p.tensor not in ctx.param_grads]
    if missing:
        raise UnsupportedError(
            f"operator {missing[0].op}: its {missing[0].role} get no gradient from the loss"
        )
    return ctx.param_grads
