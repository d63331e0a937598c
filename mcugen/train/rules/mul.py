"""The rule of MUL (the product rule, with the builtin MUL)."""

from __future__ import annotations

from mcugen.codegen.quant import ACT_NONE
from mcugen.errors import UnsupportedError
from mcugen.model.ir import Operator
from mcugen.train.rules import GradContext, gradient
from mcugen.train.rules.slicing import add_to


@gradient("MUL")
def _mul(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    """dz = dy through the fused activation (masked by the forward output); d a = dz * b and
    d b = dz * a. The other factor may broadcast; an input that needs a gradient must have the
    output's shape. MUL(x, x) sums both products."""
    dy = dys[0]
    assert dy is not None
    a, b = op.inputs[0], op.inputs[1]
    y_shape = ctx.b.tensors[op.outputs[0]].shape
    pairs = [(x, other) for x, other in ((a, b), (b, a)) if ctx.needs_grad(x)]
    for x, _ in pairs:
        if ctx.b.tensors[x].shape != y_shape:
            raise UnsupportedError("training through a broadcasting MUL is not supported yet")
    if not pairs:
        return {}
    dz = ctx.through_activation(op, dy)
    result: dict[int, int] = {}
    for x, other in pairs:
        g = ctx.grad_like(x)
        ctx.builtin("MUL", [dz, other], [g], fused_activation_function=ACT_NONE)
        add_to(ctx, result, x, g)
    return result
