"""McugenMeanSquaredError: a training graph's loss for a regressor (mcugen/train/graph.py;
runtime_c/kernels/reference/mean_squared_error.c). Inputs: float32 prediction and target of one
size; outputs: the loss [1] and its gradient by the prediction."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, invalid, out, req
from mcugen.model.ir import Graph, Operator

CODE = "McugenMeanSquaredError"


@register(f"CUSTOM:{CODE}", types=("float32",))
def lower_mean_squared_error(graph: Graph, op: Operator) -> Lowered:
    if len(op.inputs) != 2 or len(op.outputs) != 2:
        raise invalid(op, "takes a prediction and a target, gives the loss and its gradient")
    tensors = [req(graph, op, 0), req(graph, op, 1), out(graph, op, 0), out(graph, op, 1)]
    for t in tensors:
        check_dtype(op, t, "float32")
    pred, target, loss, grad = tensors
    if target.num_elements != pred.num_elements or grad.shape != pred.shape:
        raise invalid(op, f"prediction {pred.shape}, target {target.shape}")
    if loss.num_elements != 1:
        raise invalid(op, f"loss shape {loss.shape}")
    return Lowered("mean_squared_error", "mcu_mean_squared_error_f32")
