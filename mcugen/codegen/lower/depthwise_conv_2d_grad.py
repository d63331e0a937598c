"""McugenDepthwiseConv2DGrad: the backward pass of a float32 DEPTHWISE_CONV_2D in a training graph
(mcugen/train/rules/conv.py builds it; runtime_c/kernels/reference/depthwise_conv_2d_grad.c).

Inputs dy, x, W [1, KH, KW, C*M], y; outputs dW, db, dx, those its options ask for (`has_dw`,
`has_db`, `has_dx`), in that order. The other options are the forward operator's: its window
(padding, strides, dilations), `depth_multiplier` M and `fused_activation_function`."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import invalid
from mcugen.codegen.lower.conv_2d_grad import check_grad_shapes, grad_operands, grad_window
from mcugen.codegen.lower.depthwise_conv_2d import depth_multiplier
from mcugen.codegen.lower.fully_connected_grad import activation_and_flags
from mcugen.model.ir import Graph, Operator

CODE = "McugenDepthwiseConv2DGrad"
FLAGS = ("has_dw", "has_db", "has_dx")


@register(f"CUSTOM:{CODE}", types=("float32",))
def lower_depthwise_conv_2d_grad(graph: Graph, op: Operator) -> Lowered:
    if len(op.inputs) != 4:
        raise invalid(op, f"has {len(op.inputs)} inputs, not 4")
    (_, x, w, y), outputs = grad_operands(graph, op, FLAGS)
    out_c = w.shape[3]
    if w.shape[0] != 1 or y.shape[3] != out_c:
        raise invalid(op, f"filter {w.shape} does not map input {x.shape} to output {y.shape}")
    mult = depth_multiplier(op, x.shape[3], out_c)
    check_grad_shapes(op, outputs, x, w, out_c)
    return Lowered(
        "depthwise_conv_2d_grad",
        "mcu_depthwise_conv_2d_grad_f32",
        "mcu_depthwise_conv_2d_grad_params_t",
        grad_window(op, x, w, y) + activation_and_flags(op, FLAGS) + (("depth_multiplier", mult),),
    )
