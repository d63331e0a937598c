"""Rules of the convolutions: CONV_2D and DEPTHWISE_CONV_2D.

One backward operator per forward convolution reads dy, x, W and y. McugenConv2DGrad writes db
and dx, those that are wanted, and applies the SGD step to trained weights itself, one output
channel's gradient at a time after dx (flag `update_w`, with the optimiser's state as inputs):
no whole dW is ever stored, which is what lets a 256 x 256 pointwise train in 512 KB.
McugenDepthwiseConv2DGrad writes dW (small: one filter tap per channel), db and dx; the operator
that reads the weights for dx is the one that writes their gradient, so the weight update, which
depends only on that gradient, cannot run before dx is computed. The fused activation's gradient
is taken inside the kernel from the forward output y. The backward operator carries the forward
operator's options (its window, activation and depth multiplier) and the flags `has_dw` (depthwise
only), `has_db`, `has_dx`."""

from __future__ import annotations

from mcugen.model.ir import Operator
from mcugen.train.rules import GradContext, gradient

CODES = {"CONV_2D": "McugenConv2DGrad", "DEPTHWISE_CONV_2D": "McugenDepthwiseConv2DGrad"}


@gradient("CONV_2D", "DEPTHWISE_CONV_2D")
def _convolution(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    dy = dys[0]
    assert dy is not None
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else -1
    inputs = [dy, x, w, op.outputs[0]]
    if op.opcode == "CONV_2D":
        update, flags = ctx.update_in_place(w)
        inputs += update
        dw = None
    else:
        dw = ctx.param_grad(w)
        flags = {"has_dw": dw is not None}
    db = ctx.param_grad(bias)
    dx = ctx.grad_like(x) if ctx.needs_grad(x) else None
    outputs = [t for t in (dw, db, dx) if t is not None]
    if not outputs and not flags.get("update_w"):
        return {}
    options = {**op.options, **flags, "has_db": db is not None, "has_dx": dx is not None}
    ctx.custom(CODES[op.opcode], inputs, outputs, **options)
    return {x: dx} if dx is not None else {}
