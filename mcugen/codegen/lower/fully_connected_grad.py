"""McugenFullyConnectedGrad: the backward pass of a float32 FULLY_CONNECTED in a training graph
(mcugen/train/gradients.py builds it; runtime_c/kernels/reference/fully_connected_grad.c).

Inputs dy, x, W, y; outputs dW, db, dx, those its options ask for (`has_dw`, `has_db`,
`has_dx`), in that order; `fused_activation_function` is the forward operator's."""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, fused_activation, invalid, req
from mcugen.model.ir import Graph, Operator

CODE = "McugenFullyConnectedGrad"


@register(f"CUSTOM:{CODE}")
def lower_fully_connected_grad(graph: Graph, op: Operator) -> Lowered:
    flags = [int(bool(op.options.get(k, 0))) for k in ("has_dw", "has_db", "has_dx")]
    if len(op.inputs) != 4 or len(op.outputs) != sum(flags) or not any(flags):
        raise invalid(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs")
    dy, x, w, y = (req(graph, op, i) for i in range(4))
    for t in (dy, x, w, y, *(graph.tensors[o] for o in op.outputs)):
        check_dtype(op, t, "float32")
    if len(w.shape) != 2 or dy.shape != y.shape or y.num_elements % w.shape[0] != 0:
        raise invalid(op, f"weights {w.shape}, output {y.shape} and its gradient {dy.shape}")
    lo, hi = quant.activation_range_float(fused_activation(op))
    params = (("act_min_f", lo), ("act_max_f", hi)) + tuple(
        (k, f) for k, f in zip(("has_dw", "has_db", "has_dx"), flags, strict=True)
    )
    return Lowered(
        "fully_connected_grad",
        "mcu_fully_connected_grad_f32",
        "mcu_fully_connected_grad_params_t",
        params,
    )
