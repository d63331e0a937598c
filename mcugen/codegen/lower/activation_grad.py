"""McugenActivationGrad: the backward pass of a float32 RELU, RELU6 or RELU_N1_TO_1 in a training
graph (mcugen/train/gradients.py; runtime_c/kernels/reference/activation_grad.c). Inputs dy and
the forward output y; option `fused_activation_function` names the clamp."""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, fused_activation, invalid, out, req
from mcugen.model.ir import Graph, Operator

CODE = "McugenActivationGrad"


@register(f"CUSTOM:{CODE}", types=("float32",))
def lower_activation_grad(graph: Graph, op: Operator) -> Lowered:
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise invalid(op, "takes dy and y, gives dx")
    dy, y, dx = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    for t in (dy, y, dx):
        check_dtype(op, t, "float32")
    if not dy.num_elements == y.num_elements == dx.num_elements:
        raise invalid(op, f"dy {dy.shape}, y {y.shape}, dx {dx.shape}")
    lo, hi = quant.activation_range_float(fused_activation(op))
    return Lowered(
        "activation_grad",
        "mcu_activation_grad_f32",
        "mcu_activation_grad_params_t",
        (("lo", lo), ("hi", hi)),
    )
