"""McugenSoftmaxCrossEntropy: a training graph's loss for a classifier (mcugen/train/graph.py;
runtime_c/kernels/reference/softmax_cross_entropy.c). Inputs: float32 logits, int32 labels (one
per row); outputs: the loss [1] and its gradient by the logits. Option `beta`: the model's
SOFTMAX's."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, invalid, out, req
from mcugen.model.ir import Graph, Operator

CODE = "McugenSoftmaxCrossEntropy"


@register(f"CUSTOM:{CODE}", types=("float32",))
def lower_softmax_cross_entropy(graph: Graph, op: Operator) -> Lowered:
    if len(op.inputs) != 2 or len(op.outputs) != 2:
        raise invalid(op, "takes logits and labels, gives the loss and its gradient")
    logits, labels = req(graph, op, 0), req(graph, op, 1)
    loss, grad = out(graph, op, 0), out(graph, op, 1)
    check_dtype(op, logits, "float32")
    check_dtype(op, labels, "int32")
    check_dtype(op, loss, "float32")
    check_dtype(op, grad, "float32")
    rows = logits.num_elements // logits.shape[-1] if logits.shape else 0
    if grad.shape != logits.shape or labels.num_elements != rows or loss.num_elements != 1:
        raise invalid(op, f"logits {logits.shape}, labels {labels.shape}, loss {loss.shape}")
    beta = float(op.options.get("beta", 1.0))
    return Lowered(
        "softmax_cross_entropy",
        "mcu_softmax_cross_entropy_f32",
        "mcu_softmax_cross_entropy_params_t",
        (("beta", beta),),
    )
