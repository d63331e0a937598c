"""UNPACK: the input split along an axis into N outputs without that axis, as TFLM's kernel."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, invalid, out, req, unsupported
from mcugen.model.ir import Graph, Operator, element_size

PARAMS = "mcu_unpack_params_t"
TYPES = ("float32", "int8", "int16", "int32")


@register("UNPACK", types=TYPES)
def lower_unpack(graph: Graph, op: Operator) -> Lowered:
    """TFLM writes `num` outputs and makes a negative axis non-negative with the input rank."""
    if len(op.inputs) != 1:
        raise invalid(op, f"has {len(op.inputs)} inputs; its kernel reads 1")
    x = req(graph, op, 0)
    check_dtype(op, x, *TYPES)
    outputs = [out(graph, op, i) for i in range(len(op.outputs))]
    num = int(op.options.get("num", 0))
    if num != len(outputs) or num < 1:
        raise unsupported(op, f"num {num} differs from the {len(outputs)} outputs")
    raw = int(op.options.get("axis", 0))
    axis = raw + len(x.shape) if raw < 0 else raw
    if not 0 <= axis < len(x.shape):
        raise unsupported(op, f"axis {raw} is out of range for input rank {len(x.shape)}")
    if x.shape[axis] != num:
        raise unsupported(op, f"input size {x.shape[axis]} along axis {axis} is not num {num}")
    expected = x.shape[:axis] + x.shape[axis + 1 :]
    for y in outputs:
        check_dtype(op, y, x.dtype)
        if y.shape != expected:
            raise unsupported(op, f"output shape {y.shape} is not the unpacked shape {expected}")
    params = (("axis", axis), ("elem_bytes", element_size(x.dtype)))
    return Lowered("unpack", "mcu_unpack", PARAMS, params)
