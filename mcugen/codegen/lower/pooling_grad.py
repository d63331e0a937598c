"""McugenAveragePool2DGrad and McugenMaxPool2DGrad: the backward passes of float32
AVERAGE_POOL_2D and MAX_POOL_2D in a training graph (mcugen/train/rules/pool.py builds them;
runtime_c/kernels/reference/pooling_grad.c).

Average: inputs dy and the forward output y; max: dy, the forward input x and y; output dx.
Options are the forward operator's: `padding`, `stride_h`, `stride_w`, `filter_height`,
`filter_width`, `fused_activation_function`; the window geometry is derived as the forward
lowering derives it (mcugen/codegen/lower/pooling.py)."""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, fused_activation, invalid, out, req
from mcugen.codegen.lower.pooling import window_params
from mcugen.model.ir import Graph, Operator

AVERAGE = "McugenAveragePool2DGrad"
MAX = "McugenMaxPool2DGrad"
FUNCTIONS = {AVERAGE: "mcu_average_pool_2d_grad_f32", MAX: "mcu_max_pool_2d_grad_f32"}


@register(f"CUSTOM:{AVERAGE}", f"CUSTOM:{MAX}", types=("float32",))
def lower_pool_2d_grad(graph: Graph, op: Operator) -> Lowered:
    code = str(op.custom_code)
    count = 3 if code == MAX else 2
    if len(op.inputs) != count or len(op.outputs) != 1:
        raise invalid(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs")
    dy, y, dx = req(graph, op, 0), req(graph, op, count - 1), out(graph, op)
    tensors = [dy, y, dx] + ([req(graph, op, 1)] if code == MAX else [])
    for t in tensors:
        check_dtype(op, t, "float32")
    if len(dy.shape) != 4 or len(dx.shape) != 4 or dy.shape != y.shape:
        raise invalid(op, f"dy {dy.shape}, y {y.shape} and dx {dx.shape} are not matching NHWC")
    if dy.shape[0] != dx.shape[0] or dy.shape[3] != dx.shape[3]:
        raise invalid(op, f"batch and depth of dy {dy.shape} and dx {dx.shape} differ")
    if code == MAX and tensors[3].shape != dx.shape:
        raise invalid(op, f"x {tensors[3].shape} and dx {dx.shape} differ")
    lo, hi = quant.activation_range_float(fused_activation(op))
    params = window_params(op, dx, dy) + (("act_min_f", lo), ("act_max_f", hi))
    return Lowered("pooling_grad", FUNCTIONS[code], "mcu_pooling_grad_params_t", params)
