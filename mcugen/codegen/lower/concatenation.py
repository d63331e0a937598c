"""CONCATENATION: a byte copy of the inputs' slabs, as TFLM's reference kernel.

TFLM's Prepare rejects a fused activation, more than 10 inputs or 6 dimensions, int8 inputs whose
scale or zero point differ from the output's (it never requantizes), and int16 with a non-zero
zero point; these lowerings reject the same.
"""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import (
    check_dtype,
    check_parts,
    fused_activation,
    invalid,
    out,
    req,
    unsupported,
)
from mcugen.model.ir import Graph, Operator, Tensor, element_size
from mcugen.model.traits import ELEMENTWISE, NO_TRAITS, OpTraits

PARAMS = "mcu_concatenation_params_t"
TYPES = ("float32", "int8", "int16", "int32", "int64", "bool")
MAX_INPUTS = 10
MAX_DIMS = 6


def scale_and_zero_point(t: Tensor) -> tuple[float, int]:
    """TFLM's per-tensor params: the first scale and zero point, or zeros without quantization."""
    return (t.quant.scale, t.quant.zero_point) if t.quant is not None else (0.0, 0)


def check_quantization(op: Operator, x: Tensor, y: Tensor) -> None:
    """int8 inputs must share the output's scale and zero point; int16 zero points must be 0."""
    if y.dtype == "int8" and scale_and_zero_point(x) != scale_and_zero_point(y):
        raise unsupported(
            op,
            f"int8 input {x.index} has quantization {scale_and_zero_point(x)} "
            f"but the output has {scale_and_zero_point(y)}; TFLM does not "
            "requantize",
        )
    if y.dtype == "int16" and scale_and_zero_point(x)[1] != 0:
        raise unsupported(op, f"int16 input {x.index} has a non-zero zero point")


def concatenation_traits(graph: Graph, op: Operator) -> OpTraits:
    """Each input is one contiguous block of the output when every output dimension before the
    axis is 1; the kernel then skips the copy of an input already at its block. Along the last
    axis otherwise, each input is a channel slice a producer may write in place
    (`channel_slices`) when it has the output's type and quantization. Along the
    channels of an NHWC batch-1 output with no constant input it is also tileable
    (`Window.all_inputs`): a tile of each input gives that tile of the output. Never raises."""
    if len(op.outputs) != 1 or op.outputs[0] < 0 or any(t < 0 for t in op.inputs):
        return NO_TRAITS
    shape = graph.tensors[op.outputs[0]].shape
    axis = int(op.options.get("axis", 0))
    axis = axis + len(shape) if axis < 0 else axis
    if not 0 <= axis < len(shape):
        return NO_TRAITS
    blocks = all(d == 1 for d in shape[:axis])
    inputs = [graph.tensors[t] for t in op.inputs]
    tileable = (
        len(shape) == 4
        and axis == 3
        and shape[0] == 1
        and bool(inputs)
        and all(
            not x.is_constant and x.shape[:3] == shape[:3] and len(x.shape) == 4 for x in inputs
        )
    )
    slices = (
        not blocks
        and axis == len(shape) - 1
        and _channel_slices(inputs, graph.tensors[op.outputs[0]])
    )
    if not blocks and not tileable and not slices:
        return NO_TRAITS
    return OpTraits(
        input_blocks=blocks, channel_slices=slices, window=ELEMENTWISE if tileable else None
    )


def _channel_slices(inputs: list[Tensor], y: Tensor) -> bool:
    """Every input is a slice of the output's last axis that a producer could write in place:
    not a constant, the output's other dimensions and type, and its scale and zero point (the
    copy then changes no byte)."""
    return bool(inputs) and all(
        not x.is_constant
        and x.shape[:-1] == y.shape[:-1]
        and x.dtype == y.dtype
        and scale_and_zero_point(x) == scale_and_zero_point(y)
        for x in inputs
    )


@register("CONCATENATION", traits=concatenation_traits, types=TYPES)
def lower_concatenation(graph: Graph, op: Operator) -> Lowered:
    """Axis made non-negative against the output rank, as TFLM's CalculatePositiveAxis."""
    if len(op.outputs) != 1:
        raise invalid(op, f"has {len(op.outputs)} outputs; its kernel writes 1")
    y = out(graph, op)
    inputs = [req(graph, op, i) for i in range(len(op.inputs))]
    if not inputs or len(inputs) > MAX_INPUTS:
        raise unsupported(op, f"{len(inputs)} inputs; TFLM supports 1 to {MAX_INPUTS}")
    if fused_activation(op) != 0:
        raise unsupported(op, "a fused activation is not supported (TFLM rejects it)")
    check_dtype(op, y, *TYPES)
    for x in inputs:
        check_dtype(op, x, y.dtype)
        check_quantization(op, x, y)
        if len(x.shape) > MAX_DIMS:
            raise unsupported(op, f"input rank {len(x.shape)} exceeds {MAX_DIMS}")
    if y.dtype == "int16" and scale_and_zero_point(y)[1] != 0:
        raise unsupported(op, "the int16 output has a non-zero zero point")
    raw_axis = int(op.options.get("axis", 0))
    axis = raw_axis + len(y.shape) if raw_axis < 0 else raw_axis
    if not 0 <= axis < len(y.shape):
        raise unsupported(op, f"axis {raw_axis} is out of range for rank {len(y.shape)}")
    check_parts(op, inputs, y, axis, "input")
    params = (("axis", axis), ("elem_bytes", element_size(y.dtype)))
    return Lowered("concatenation", "mcu_concatenation", PARAMS, params)
