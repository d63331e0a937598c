"""DEQUANTIZE: int8 / int16 / uint8 -> float32, scale * (q - zero point)."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import check_dtype, invalid, out, qparams, req, unsupported
from mcugen.model.ir import Graph, Operator

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "int16", "uint8")

PARAMS = "mcu_dequantize_params_t"


@register("DEQUANTIZE", types=TYPES)
def lower_dequantize(graph: Graph, op: Operator) -> Lowered:
    """Per-tensor quantized integer input to float32 output."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise unsupported(op, "expects exactly one input and one output")
    x, y = req(graph, op, 0), out(graph, op)
    check_dtype(op, x, *TYPES)
    check_dtype(op, y, "float32")
    if x.num_elements != y.num_elements:
        raise invalid(op, f"input shape {x.shape} and output shape {y.shape} differ in size")
    qx = qparams(op, x)
    if qx.per_channel:
        # TFLM's kernel would silently use the first channel's scale for every element.
        raise unsupported(
            op, f"tensor {x.index} is quantized per channel; only per-tensor is supported"
        )
    params = (("scale", qx.scale), ("zero_point", qx.zero_point))
    return Lowered("dequantize", "mcu_dequantize", PARAMS, params)
