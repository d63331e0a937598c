"""PRELU: int8 and float32, alpha broadcast to the input (numpy rules)."""

from __future__ import annotations

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import OVERWRITES_INPUT, qparams, unsupported
from mcugen.codegen.lower.add import binary_operands
from mcugen.model.ir import Graph, Operator

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "float32")

PARAMS = "mcu_prelu_params_t"
FLOAT_MAX_RANK = 4  # TFLM's float kernel extends every shape to 4-D


@register("PRELU", traits=OVERWRITES_INPUT, types=TYPES)
def lower_prelu(graph: Graph, op: Operator) -> Lowered:
    """prelu_common.cc: identity factor s_in / s_out and alpha factor s_in * s_alpha / s_out, both
    in double, through QuantizeMultiplier."""
    x, alpha, y, dtype = binary_operands(graph, op, *TYPES)
    if dtype == "float32":
        if len(y.shape) > FLOAT_MAX_RANK:
            raise unsupported(op, f"float32 PRELU of rank {len(y.shape)}; TFLM supports up to 4")
        return Lowered("prelu", "mcu_prelu_f32")
    qx, qa, qy = qparams(op, x), qparams(op, alpha), qparams(op, y)
    if qa.per_channel:
        raise unsupported(op, "per-channel quantized alpha is not supported (TFLM uses one scale)")
    identity = quant.quantize_multiplier(qx.scale / qy.scale)
    scaled_alpha = quant.quantize_multiplier(qx.scale * qa.scale / qy.scale)
    params = (
        ("input_offset", -qx.zero_point),
        ("alpha_offset", -qa.zero_point),
        ("output_offset", qy.zero_point),
        ("identity_multiplier", identity[0]),
        ("identity_shift", identity[1]),
        ("alpha_multiplier", scaled_alpha[0]),
        ("alpha_shift", scaled_alpha[1]),
    )
    return Lowered("prelu", "mcu_prelu_int8", PARAMS, params)
