"""McugenSgd: a training graph's weight update (mcugen/train/graph.py; runtime_c/kernels/
reference/sgd.c). Inputs: the parameter (a float32 variable), its gradient, the accumulated
gradient and the momentum (variables, each omitted when not used), `apply` (int32 [1]). No
outputs. Options: `learning_rate`, `momentum`, `weight_decay`.

`update_params` checks the same operands and options for the backward kernels that update their
weights themselves (McugenConv2DGrad, McugenFullyConnectedGrad with `update_w`)."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, Value, register
from mcugen.codegen.lower._common import check_dtype, inp, invalid, req
from mcugen.model.ir import Graph, Operator

CODE = "McugenSgd"


def update_params(
    graph: Graph, op: Operator, param: int, first: int, *, prefix: str = ""
) -> tuple[tuple[str, Value], ...]:
    """The SGD options of `op`, after checking its operands: input `param` the trained variable,
    inputs `first`, `first` + 1 its sum and momentum (variables, each omitted when not kept) and
    `first` + 2 `apply`. `prefix` names the fields ("sgd." for a nested mcu_sgd_params_t)."""
    w, apply = req(graph, op, param), req(graph, op, first + 2)
    acc, mom = inp(graph, op, first), inp(graph, op, first + 1)
    if not w.is_variable or any(t is not None and not t.is_variable for t in (acc, mom)):
        raise invalid(op, "updates variables only")
    for t in (w, acc, mom):
        if t is not None:
            check_dtype(op, t, "float32")
            if t.num_elements != w.num_elements:
                raise invalid(op, f"tensor {t.index} has {t.num_elements} elements")
    check_dtype(op, apply, "int32")
    momentum = float(op.options.get("momentum", 0.0))
    if (momentum != 0.0) != (mom is not None):
        raise invalid(op, "momentum without its variable, or a variable without momentum")
    return (
        (f"{prefix}learning_rate", float(op.options["learning_rate"])),
        (f"{prefix}momentum", momentum),
        (f"{prefix}weight_decay", float(op.options.get("weight_decay", 0.0))),
    )


@register(f"CUSTOM:{CODE}", types=("float32",))
def lower_sgd(graph: Graph, op: Operator) -> Lowered:
    if len(op.inputs) != 5 or op.outputs:
        raise invalid(op, "takes the parameter, its gradient, sum, momentum and apply")
    w, g = req(graph, op, 0), req(graph, op, 1)
    check_dtype(op, g, "float32")
    if g.num_elements != w.num_elements:
        raise invalid(op, f"tensor {g.index} has {g.num_elements} elements")
    return Lowered("sgd", "mcu_sgd_f32", "mcu_sgd_params_t", update_params(graph, op, 0, 2))
