"""Rules of the window and reduction operators: AVERAGE_POOL_2D, MAX_POOL_2D and MEAN, each a
backward kernel (runtime_c/kernels/reference/pooling_grad.c, mean_grad.c)."""

from __future__ import annotations

from mcugen.errors import UnsupportedError
from mcugen.model.ir import Operator
from mcugen.train.rules import GradContext, gradient

#: The forward pool's options its backward operator keeps (the window and the activation).
WINDOW_OPTIONS = (
    "padding",
    "stride_h",
    "stride_w",
    "filter_height",
    "filter_width",
    "fused_activation_function",
)


@gradient("AVERAGE_POOL_2D", "MAX_POOL_2D")
def _pool_2d(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    """Average: each in-image tap of a window gets dy / (in-image taps), the count the forward
    divides by; max: the window's first largest tap gets dy (both in pooling_grad.c). The fused
    activation's mask comes from the forward output."""
    dy, x, y = dys[0], op.inputs[0], op.outputs[0]
    assert dy is not None
    if not ctx.needs_grad(x):
        return {}
    dx = ctx.grad_like(x)
    window = {k: int(op.options.get(k, 0)) for k in WINDOW_OPTIONS}
    if op.opcode == "AVERAGE_POOL_2D":
        ctx.custom("McugenAveragePool2DGrad", [dy, y], [dx], **window)
    else:
        ctx.custom("McugenMaxPool2DGrad", [dy, x, y], [dx], **window)
    return {x: dx}


def reduced_axes(ctx: GradContext, op: Operator) -> list[int]:
    """The constant axes of a MEAN, made non-negative, without duplicates, sorted."""
    rank = len(ctx.b.tensors[op.inputs[0]].shape)
    axis = ctx.b.tensors[op.inputs[1]]
    if not axis.is_constant or axis.dtype != "int32":
        raise UnsupportedError("training through a MEAN needs constant int32 axes")
    axes = {int(a) + rank if int(a) < 0 else int(a) for a in axis.array().ravel()}
    if not all(0 <= a < rank for a in axes):
        raise UnsupportedError(f"MEAN axes {sorted(axes)} are out of range for rank {rank}")
    return sorted(axes)


@gradient("MEAN")
def _mean(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    """dx = dy broadcast over the averaged axes, divided by their element count (mean_grad.c);
    keep_dims changes dy's shape, not its layout."""
    dy, x = dys[0], op.inputs[0]
    assert dy is not None
    if not ctx.needs_grad(x):
        return {}
    dx = ctx.grad_like(x)
    mask = sum(1 << a for a in reduced_axes(ctx, op))
    ctx.custom("McugenMeanGrad", [dy], [dx], reduce_mask=mask)
    return {x: dx}
