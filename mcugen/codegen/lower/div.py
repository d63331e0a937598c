"""DIV: int32 with numpy broadcasting (TFLM's div.cc int32 path: C division, truncating).

As TFLM's DivPrepare: unquantized int32 operands. Its broadcast path (BroadcastDivSlow) handles at
most 5 dimensions. A constant divisor holding 0 is rejected at build time (TFLM traps); a computed
one is checked by the kernel (MCU_ERR_INPUT), as is INT32_MIN / -1. float32 and int8 DIV are not
implemented.
"""

from __future__ import annotations

import numpy as np

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import int32_activation_params, invalid, unsupported
from mcugen.codegen.lower.add import binary_operands
from mcugen.model.ir import Graph, Operator

#: The element types of DIV (declared with its registration; TFLM's DIV takes float32 too).
TYPES = ("int32",)

MAX_BROADCAST_DIMS = 5


@register("DIV", types=TYPES)
def lower_div(graph: Graph, op: Operator) -> Lowered:
    a, b, y, _ = binary_operands(graph, op, *TYPES)
    if a.quant is not None or b.quant is not None:
        raise unsupported(op, "int32 operands must not be quantized (TFLM requires it)")
    if a.shape != b.shape and len(y.shape) > MAX_BROADCAST_DIMS:
        raise unsupported(op, f"broadcasting over {len(y.shape)} dimensions (TFLM: at most 5)")
    if b.is_constant and bool(np.any(b.array() == 0)):
        raise invalid(op, f"constant divisor {b.index} holds a zero")
    return Lowered("div", "mcu_div_int32", "mcu_div_params_t", int32_activation_params(op))
