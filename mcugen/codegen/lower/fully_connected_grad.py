"""McugenFullyConnectedGrad: the backward pass of a float32 FULLY_CONNECTED in a training graph
(mcugen/train/rules/basic.py builds it; runtime_c/kernels/reference/fully_connected_grad.c).

Inputs dy, x, W, y, then W's sum, momentum and `apply` (McugenSgd's, -1 when W does not train);
outputs db, dx, those its options ask for (`has_db`, `has_dx`), in that order. With `update_w`
the kernel applies the SGD step (`learning_rate`, `momentum`, `weight_decay`) to W itself, one
output row at a time, in a scratch of one row; `fused_activation_function` is the forward
operator's."""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, Value, register
from mcugen.codegen.lower._common import check_dtype, fused_activation, invalid, req
from mcugen.codegen.lower.sgd import update_params
from mcugen.model.ir import Graph, Operator, Tensor

CODE = "McugenFullyConnectedGrad"
FLAGS = ("has_db", "has_dx")


def activation_and_flags(op: Operator, flags: tuple[str, ...]) -> tuple[tuple[str, Value], ...]:
    """The fused activation's float range and the output flags `flags` (0 or 1): the fields of
    mcu_grad_layer_params_t (mcu/kernels/sgd.h) besides the update, and of the depthwise one."""
    lo, hi = quant.activation_range_float(fused_activation(op))
    values = tuple((k, int(bool(op.options.get(k, False)))) for k in flags)
    return (("act_min_f", lo), ("act_max_f", hi)) + values


def weight_update(
    graph: Graph, op: Operator, w: Tensor, row: int
) -> tuple[tuple[tuple[str, Value], ...], int]:
    """(parameters, scratch bytes) of a backward kernel that may update W (input 2) itself from
    inputs 4 to 6, one row of `row` elements at a time; without `update_w` those inputs are -1."""
    if len(op.inputs) != 7:
        raise invalid(op, f"has {len(op.inputs)} inputs, not 7")
    if not op.options.get("update_w", False):
        if any(t >= 0 for t in op.inputs[4:]):
            raise invalid(op, "has an optimiser state but does not update its weights")
        return (("update_w", 0),), 0
    return (("update_w", 1),) + update_params(graph, op, 2, 4, prefix="sgd."), 4 * row


@register(f"CUSTOM:{CODE}", types=("float32",))
def lower_fully_connected_grad(graph: Graph, op: Operator) -> Lowered:
    flags = [int(bool(op.options.get(k, 0))) for k in FLAGS]
    if len(op.outputs) != sum(flags) or not (any(flags) or op.options.get("update_w")):
        raise invalid(op, f"has {len(op.outputs)} outputs for flags {flags}")
    dy, x, w, y = (req(graph, op, i) for i in range(4))
    for t in (dy, x, w, y, *(graph.tensors[o] for o in op.outputs)):
        check_dtype(op, t, "float32")
    if len(w.shape) != 2 or dy.shape != y.shape or y.num_elements % w.shape[0] != 0:
        raise invalid(op, f"weights {w.shape}, output {y.shape} and its gradient {dy.shape}")
    update, scratch = weight_update(graph, op, w, w.shape[1])
    return Lowered(
        "fully_connected_grad",
        "mcu_fully_connected_grad_f32",
        "mcu_fully_connected_grad_params_t",
        activation_and_flags(op, FLAGS) + update,
        scratch_bytes=scratch,
        headers=("mcu/kernels/sgd.h",),
    )
