"""Rules of the dense layers and of the operators whose gradient is a builtin operator:
FULLY_CONNECTED, the clamp activations, RESHAPE and its kin, ADD."""

from __future__ import annotations

import numpy as np

from mcugen.codegen.quant import ACT_NONE
from mcugen.errors import UnsupportedError
from mcugen.model.ir import Operator
from mcugen.train.rules import GradContext, gradient


@gradient("FULLY_CONNECTED")
def _fully_connected(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    dy = dys[0]
    assert dy is not None
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else -1
    update, flags = ctx.update_in_place(w)  # W's SGD step runs in the kernel, row by row
    db = ctx.param_grad(bias)
    dx = ctx.grad_like(x) if ctx.needs_grad(x) else None
    outputs = [t for t in (db, dx) if t is not None]
    if not outputs and not flags:
        return {}
    ctx.custom(
        "McugenFullyConnectedGrad",
        [dy, x, w, op.outputs[0], *update],
        outputs,
        **flags,
        has_db=db is not None,
        has_dx=dx is not None,
        fused_activation_function=int(op.options.get("fused_activation_function", ACT_NONE)),
    )
    return {x: dx} if dx is not None else {}


@gradient("RELU", "RELU6", "RELU_N1_TO_1")
def _clamp(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    dy, x = dys[0], op.inputs[0]
    assert dy is not None
    if not ctx.needs_grad(x):
        return {}
    act = {"RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}[op.opcode]
    dx = ctx.grad_like(x)
    ctx.custom("McugenActivationGrad", [dy, op.outputs[0]], [dx], fused_activation_function=act)
    return {x: dx}


@gradient("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def _reshape(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    dy, x = dys[0], op.inputs[0]
    assert dy is not None
    if not ctx.needs_grad(x):
        return {}
    dx = ctx.grad_like(x)
    shape = np.array(ctx.b.tensors[x].shape, dtype=np.int32)
    ctx.builtin("RESHAPE", [dy, ctx.constant(shape, "grad_shape")], [dx])
    return {x: dx}


@gradient("ADD")
def _add(ctx: GradContext, op: Operator, dys: tuple[int | None, ...]) -> dict[int, int]:
    dy = dys[0]
    assert dy is not None
    dz = ctx.through_activation(op, dy)
    y_shape = ctx.b.tensors[op.outputs[0]].shape
    result: dict[int, int] = {}
    for x in op.inputs:
        if not ctx.needs_grad(x):
            continue
        if ctx.b.tensors[x].shape != y_shape:
            raise UnsupportedError("training through a broadcasting ADD is not supported yet")
        if x in result:  # ADD(x, x)
            total = ctx.grad_like(x)
            ctx.builtin("ADD", [result[x], dz], [total])
            result[x] = total
        else:
            result[x] = dz
    return result
