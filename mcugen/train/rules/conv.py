"""Rules of the convolutions: CONV_2D and DEPTHWISE_CONV_2D.

One backward operator per forward convolution (McugenConv2DGrad, McugenDepthwiseConv2DGrad) reads
dy, x, W and y and writes dW, db and dx, those that are wanted: the operator that reads the
weights for dx is the one that writes their gradient, so the weight update, which depends only on
that gradient, cannot run before dx is computed. The fused activation's gradient is taken inside
the kernel from the forward output y. The backward operator carries the forward operator's options
(its window, activation and depth multiplier) and the flags `has_dw`, `has_db`, `has_dx`."""

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
    dw, db = ctx.param_grad(w), ctx.param_grad(bias)
    dx = ctx.grad_like(x) if ctx.needs_grad(x) else None
    outputs = [t for t in (dw, db, dx) if t is not None]
    if not outputs:
        return {}
    ctx.custom(
        CODES[op.opcode],
        [dy, x, w, op.outputs[0]],
        outputs,
        **op.options,
        has_dw=dw is not None,
        has_db=db is not None,
        has_dx=dx is not None,
    )
    return {x: dx} if dx is not None else {}
