"""Lean optimised variants: no scratch, slower than the fast variants of the same operators and
faster than the reference kernels. Speed first (`--kernels opt`) never picks them, because the fast
variants are registered before them (this module imports theirs first); kernels chosen for memory
(mcugen/kernel_choice.py) find them on a layer's ladder between the fast variant and the reference
kernel.

- `depthwise_conv_2d_s8_lean` (runtime_c/kernels/opt/depthwise_conv_2d_s8_lean.c): int8 depth
  multiplier 1, any filter, stride, dilation and padding; the weights and inputs read as they
  are, four channels a word (SXTB16 / SXTAB16, SMLABB / SMLATT), where the fast variant widens
  weights and a band of input rows into its scratch.
- `conv_2d_1x1_s8_lean` (runtime_c/kernels/opt/conv_2d_1x1_s8_lean.c): the 1x1 convolutions that
  `conv_2d_1x1_s8` takes, one pixel at a time through the matrix product's single-row path
  (mat_mult_s8.c `mcu_mat_mult_s8_row`), where the fast one widens two pixels into its scratch.

Both keep the operator's registered traits: in place they get the reference kernel's staging as
scratch (conv_2d.py `conv_staging_bytes`): the depthwise variant then copies one channel plane at
a time into it, the 1x1 one one pixel at a time, before writing their outputs.
"""

from __future__ import annotations

from dataclasses import replace

from mcugen.codegen.lower import Array, Lowered, fields
from mcugen.codegen.lower._rung import rung
from mcugen.codegen.lower.opt_depthwise import depthwise_conv_2d_s8  # registered first
from mcugen.codegen.lower.opt_depthwise_ring import depthwise_conv_2d_s8_ring  # and it
from mcugen.codegen.lower.opt_direct import conv_2d_1x1_s8_direct  # registered first
from mcugen.codegen.lower.opt_mat_mult import (
    HEADER,
    _variant,
    conv_2d_1x1_s8,
    kernel_requantizes,
    takes_1x1,
)
from mcugen.model.ir import Graph, Operator

LEAN_HEADER = "mcu/kernels/lean.h"
#: the fast variants these follow on a ladder (imported above so that they register first)
FAST = (depthwise_conv_2d_s8, depthwise_conv_2d_s8_ring, conv_2d_1x1_s8, conv_2d_1x1_s8_direct)


@rung("depthwise_conv_2d_s8_lean", "DEPTHWISE_CONV_2D")
def depthwise_conv_2d_s8_lean(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8, depth multiplier 1, any filter size, stride, dilation and padding; no scratch (in
    place: a channel plane at a time in the staging)."""
    if reference.function != "mcu_depthwise_conv_2d_int8":
        return None
    ref = fields(reference.params)
    if ref["depth_multiplier"] != 1:
        return None
    multipliers, shifts = ref["multipliers"], ref["shifts"]
    if not isinstance(multipliers, Array) or not isinstance(shifts, Array):
        return None
    if not kernel_requantizes(multipliers, shifts):
        return None
    return Lowered(
        reference.kernel,
        "mcu_depthwise_conv_2d_s8_lean",
        reference.params_type,
        reference.params,
        0,
        variant="depthwise_conv_2d_s8_lean",
        sources=("opt/depthwise_conv_2d_s8_lean.c",),
        headers=(LEAN_HEADER,),
        pixels_in_order=True,  # per output pixel, its taps read where they are
    )


@rung("conv_2d_1x1_s8_lean", "CONV_2D")
def conv_2d_1x1_s8_lean(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """what conv_2d_1x1_s8 takes, one pixel at a time read as it is; no scratch, not in place
    (its staging then)."""
    if not takes_1x1(graph, op, reference):
        return None
    low = _variant(graph, op, reference, "conv_2d_1x1_s8_lean", "mcu_conv_2d_1x1_s8_lean", 0)
    if low is None:
        return None
    # mcu_pointwise_pixels writes a concatenation's channel slice at the node's output stride,
    # and, not in place, pixels from the first on
    return replace(low, headers=(HEADER, LEAN_HEADER), output_stride=True, pixels_in_order=True)
