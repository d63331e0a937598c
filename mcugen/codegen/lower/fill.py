"""FILL: float32, int32 and int8 values (TFLM micro/kernels/fill.cc), with a constant dims input
of an integer type equal to the output shape, as TFLM's Prepare requires."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, out, req, unsupported
from mcugen.model.ir import Graph, Operator, element_size

#: The element types of the operator's data input (declared with its registration).
VALUE_TYPES = ("float32", "int32", "int8")

PARAMS = "mcu_fill_params_t"
DIMS_TYPES = ("int8", "int16", "int32", "int64")


@register("FILL", types=VALUE_TYPES, data_input=1)
def lower_fill(graph: Graph, op: Operator) -> Lowered:
    """No sharing trait: the output is not element-wise in either input."""
    dims, value, y = req(graph, op, 0), req(graph, op, 1), out(graph, op)
    dtype = check_dtype(op, value, *VALUE_TYPES)
    check_dtype(op, y, dtype)
    if value.shape != ():
        raise unsupported(op, f"value input has shape {value.shape}; TFLM requires a scalar")
    if not dims.is_constant:
        raise unsupported(op, "the dims input is not constant (TFLM requires it)")
    check_dtype(op, dims, *DIMS_TYPES)
    if len(dims.shape) != 1 or tuple(int(d) for d in dims.array()) != tuple(y.shape):
        raise unsupported(op, f"dims input does not equal the output shape {y.shape}")
    return Lowered("fill", "mcu_fill", PARAMS, (("element_bytes", element_size(dtype)),))
