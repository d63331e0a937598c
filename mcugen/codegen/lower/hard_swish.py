"""HARD_SWISH: int8 (TFLM's 16-bit fixed-point reference) and float32."""

from __future__ import annotations

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import POINTWISE_UNARY, qparams, unsupported
from mcugen.codegen.lower.activations import unary_operands
from mcugen.model.ir import Graph, Operator

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "float32")

PARAMS = "mcu_hard_swish_params_t"
RELUISH_SCALE = 3.0 / 32768.0  # exact in float32 and double


def downscale_to_int16(multiplier: int) -> int:
    """DownScaleInt32ToInt16Multiplier: round a Q31 multiplier to Q15, saturating."""
    if multiplier >= 2**31 - 1 - (1 << 15):
        return 2**15 - 1
    return (multiplier + (1 << 15)) >> 16


def int16_multiplier(real: float) -> tuple[int, int]:
    """QuantizeMultiplier then DownScaleInt32ToInt16Multiplier: (int16 multiplier, exponent)."""
    multiplier, exponent = quant.quantize_multiplier(real)
    return downscale_to_int16(multiplier), exponent


@register("HARD_SWISH", traits=POINTWISE_UNARY, types=TYPES)
def lower_hard_swish(graph: Graph, op: Operator) -> Lowered:
    """HardSwishPrepare: hires_scale = float32(1/128) * s_in in float32, then (as the pip
    interpreter computes them) double(hires_scale) / double(s_out) and double(hires_scale) /
    (3 / 32768)."""
    x, y, dtype = unary_operands(graph, op, *TYPES)
    if dtype == "float32":
        return Lowered("hard_swish", "mcu_hard_swish_f32")
    qx, qy = qparams(op, x), qparams(op, y)
    hires_scale = float(np.float32(1.0 / 128.0) * np.float32(qx.scale))
    out_mult, out_exp = int16_multiplier(hires_scale / qy.scale)
    if out_exp > 0:
        raise unsupported(
            op, f"output scale {qy.scale} is at most input scale / 128; TFLM rejects it"
        )
    reluish_mult, reluish_exp = int16_multiplier(hires_scale / RELUISH_SCALE)
    if reluish_exp > 31:
        raise unsupported(op, f"input scale {qx.scale} is too large for the 16-bit pipeline")
    params = (
        ("input_zero_point", qx.zero_point),
        ("output_zero_point", qy.zero_point),
        ("output_multiplier", out_mult),
        ("output_exponent", out_exp),
        ("reluish_multiplier", reluish_mult),
        ("reluish_exponent", reluish_exp),
    )
    return Lowered("hard_swish", "mcu_hard_swish_int8", PARAMS, params)
