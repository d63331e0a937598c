"""McugenMeanGrad: the backward pass of a float32 MEAN in a training graph
(mcugen/train/rules/pool.py builds it; runtime_c/kernels/reference/mean_grad.c).

Input dy (the forward output's shape), output dx (the forward input's shape); option
`reduce_mask`: bit i set when input dimension i was averaged over."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, invalid, out, req
from mcugen.codegen.lower.mean import MAX_DIMS
from mcugen.model.ir import Graph, Operator

CODE = "McugenMeanGrad"


@register(f"CUSTOM:{CODE}", types=("float32",))
def lower_mean_grad(graph: Graph, op: Operator) -> Lowered:
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise invalid(op, "takes dy, gives dx")
    dy, dx = req(graph, op, 0), out(graph, op)
    for t in (dy, dx):
        check_dtype(op, t, "float32")
    mask = int(op.options.get("reduce_mask", 0))
    rank = len(dx.shape)
    if not 1 <= rank <= MAX_DIMS or not 0 <= mask < 1 << rank:
        raise invalid(op, f"reduce mask {mask:#x} for an input of rank {rank}")
    count = 1
    for axis in range(rank):
        if mask >> axis & 1:
            count *= dx.shape[axis]
    if count == 0 or dx.num_elements // count != dy.num_elements:
        raise invalid(op, f"dy {dy.shape} is not dx {dx.shape} reduced by mask {mask:#x}")
    params = (("reduce_mask", mask), ("num_reduced", count))
    return Lowered("mean_grad", "mcu_mean_grad_f32", "mcu_mean_grad_params_t", params)
