"""McugenSgd: a training graph's weight update (mcugen/train/graph.py; runtime_c/kernels/
reference/sgd.c). Inputs: the parameter (a float32 variable), its gradient, the accumulated
gradient and the momentum (variables, each omitted when not used), `apply` (int32 [1]). No
outputs. Options: `learning_rate`, `momentum`, `weight_decay`."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, inp, invalid, req
from mcugen.model.ir import Graph, Operator

CODE = "McugenSgd"


@register(f"CUSTOM:{CODE}")
def lower_sgd(graph: Graph, op: Operator) -> Lowered:
    if len(op.inputs) != 5 or op.outputs:
        raise invalid(op, "takes the parameter, its gradient, sum, momentum and apply")
    w, g, apply = req(graph, op, 0), req(graph, op, 1), req(graph, op, 4)
    acc, mom = inp(graph, op, 2), inp(graph, op, 3)
    if not w.is_variable or any(t is not None and not t.is_variable for t in (acc, mom)):
        raise invalid(op, "updates variables only")
    for t in (w, g, acc, mom):
        if t is not None:
            check_dtype(op, t, "float32")
            if t.num_elements != w.num_elements:
                raise invalid(op, f"tensor {t.index} has {t.num_elements} elements")
    check_dtype(op, apply, "int32")
    momentum = float(op.options.get("momentum", 0.0))
    if (momentum != 0.0) != (mom is not None):
        raise invalid(op, "momentum without its variable, or a variable without momentum")
    params = (
        ("learning_rate", float(op.options["learning_rate"])),
        ("momentum", momentum),
        ("weight_decay", float(op.options.get("weight_decay", 0.0))),
    )
    return Lowered("sgd", "mcu_sgd_f32", "mcu_sgd_params_t", params)
