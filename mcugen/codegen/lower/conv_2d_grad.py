"""McugenConv2DGrad: the backward pass of a float32 CONV_2D in a training graph
(mcugen/train/rules/conv.py builds it; runtime_c/kernels/reference/conv_2d_grad.c).

Inputs dy, x, W, y, then W's sum, momentum and `apply` (McugenSgd's, -1 when W does not train);
outputs db, dx, those its options ask for (`has_db`, `has_dx`), in that order. With `update_w`
the kernel applies the SGD step (`learning_rate`, `momentum`, `weight_decay`) to W itself, one
output channel at a time, in a scratch of one filter. The other options are the forward
operator's: its window (padding, strides, dilations) and `fused_activation_function`. Grouped
convolutions (filter depth below the input depth) are handled as the forward kernel handles
them. `grad_operands`, `check_grad_shapes` and `grad_window` serve the depthwise one too.
This kernel's parameters besides the window are an mcu_grad_layer_params_t, the member `layer`."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, Value, member, register
from mcugen.codegen.lower._common import WINDOW_PARAMS, check_dtype, invalid, req
from mcugen.codegen.lower.conv_2d import check_4d, window_params
from mcugen.codegen.lower.fully_connected_grad import activation_and_flags, weight_update
from mcugen.model.ir import Graph, Operator, Tensor

CODE = "McugenConv2DGrad"
FLAGS = ("has_db", "has_dx")


def grad_operands(
    graph: Graph, op: Operator, flags: tuple[str, ...]
) -> tuple[list[Tensor], dict[str, Tensor]]:
    """([dy, x, W, y], {flag: the output it asks for}) of a convolution's backward operator, all
    float32, dy shaped as y; `flags` name the outputs it may have, in order."""
    wanted = [k for k in flags if op.options.get(k, False)]
    if len(op.outputs) != len(wanted) or not (wanted or op.options.get("update_w")):
        raise invalid(op, f"has {len(op.outputs)} outputs for flags {wanted}")
    inputs = [req(graph, op, i) for i in range(4)]
    outputs = {k: graph.tensors[t] for k, t in zip(wanted, op.outputs, strict=True)}
    for t in (*inputs, *outputs.values()):
        check_dtype(op, t, "float32")
    dy, x, w, y = inputs
    check_4d(op, x, w, y)
    if dy.shape != y.shape or y.shape[0] != x.shape[0]:
        raise invalid(op, f"input {x.shape}, output {y.shape} and its gradient {dy.shape}")
    return inputs, outputs


def check_grad_shapes(
    op: Operator, outputs: dict[str, Tensor], x: Tensor, w: Tensor, channels: int
) -> None:
    """dW shaped as W, db one per output channel, dx shaped as x."""
    for flag, t in outputs.items():
        if flag == "has_db":
            ok = t.num_elements == channels
        else:
            ok = t.shape == (w.shape if flag == "has_dw" else x.shape)
        if not ok:
            raise invalid(op, f"gradient {t.index} has shape {t.shape} ({flag})")


def grad_window(op: Operator, x: Tensor, w: Tensor, y: Tensor) -> tuple[tuple[str, Value], ...]:
    """The forward window, checked against the shapes."""
    window = window_params(
        op, (x.shape[1], x.shape[2]), (w.shape[1], w.shape[2]), out_hw=(y.shape[1], y.shape[2])
    )
    return member(WINDOW_PARAMS, window)


@register(f"CUSTOM:{CODE}", types=("float32",))
def lower_conv_2d_grad(graph: Graph, op: Operator) -> Lowered:
    (_, x, w, y), outputs = grad_operands(graph, op, FLAGS)
    in_c, (out_c, _, _, k_c) = x.shape[3], w.shape
    if k_c < 1 or in_c % k_c != 0 or out_c % (in_c // k_c) != 0 or y.shape[3] != out_c:
        raise invalid(op, f"filter {w.shape} does not map input {x.shape} to output {y.shape}")
    check_grad_shapes(op, outputs, x, w, out_c)
    update, scratch = weight_update(graph, op, w, w.num_elements // out_c)
    return Lowered(
        "conv_2d_grad",
        "mcu_conv_2d_grad_f32",
        "mcu_conv_2d_grad_params_t",
        grad_window(op, x, w, y) + member("layer", activation_and_flags(op, FLAGS) + update),
        scratch_bytes=scratch,
        headers=("mcu/kernels/sgd.h",),
    )
