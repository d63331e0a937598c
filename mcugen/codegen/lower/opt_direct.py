"""The 1x1 CONV_2D's rungs for memory between conv_2d_1x1_s8 (two pixels widened into 16-bit lanes
in its scratch) and the lean variant, for layers with the matrix product's short requantisation,
their inputs read as int8 and widened in registers:
- conv_2d_1x1_s8_staged (runtime_c/kernels/opt/conv_2d_1x1_s8_staged.c): two pixels staged as
  bytes (half the widened pair: the reference kernel's staging), conv_2d_1x1_s8's stream path's
  parameters and weights as they are;
- conv_2d_1x1_s8_direct (conv_2d_1x1_s8_direct.c): a pixel at a time read as it is, no scratch (in
  place: the reference kernel's staging, the operator's registered traits), its groups of four
  channels' constants in a stream (`quad_stream`).
Importing opt_mat_mult first registers the fast variant first; opt_lean imports this module, so
the lean variant registers after these.
"""

from __future__ import annotations

from dataclasses import replace

from mcugen.codegen.lower import Array, Lowered, Value, fields
from mcugen.codegen.lower._rung import rung
from mcugen.codegen.lower.opt_mat_mult import HEADER, _variant, conv_2d_1x1_s8, takes_1x1
from mcugen.codegen.quant import wrap_i32
from mcugen.model.ir import Graph, Operator


@rung("conv_2d_1x1_s8_staged", "CONV_2D")
def conv_2d_1x1_s8_staged(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """what conv_2d_1x1_s8 runs with its stream (depth a multiple of 4, channels even, the short
    requantisation), two pixels of int8 inputs as scratch (the reference's staging).

    runtime_c/kernels/opt/conv_2d_1x1_s8_staged.c: conv_2d_1x1_s8's stream path with its
    parameters and weights as they are, its scratch two pixels of int8 inputs (half the widened
    pair's), which in place is also its staging (conv_2d_1x1_s8's traits)."""
    fast = conv_2d_1x1_s8(graph, op, reference)
    if fast is None or fast.function != "mcu_conv_2d_1x1_s8_pairs":
        return None
    return replace(
        fast,
        function="mcu_conv_2d_1x1_s8_staged",
        scratch_bytes=2 * graph.tensors[op.inputs[0]].shape[3],
        variant="conv_2d_1x1_s8_staged",
        sources=("opt/conv_2d_1x1_s8_staged.c",),
        headers=(HEADER, "mcu/kernels/conv_2d.h"),
    )


@rung("conv_2d_1x1_s8_direct", "CONV_2D")
def conv_2d_1x1_s8_direct(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """what conv_2d_1x1_s8 takes with its short requantisation, a pixel at a time read as it is;
    no scratch, not in place (its staging then).

    runtime_c/kernels/opt/conv_2d_1x1_s8_direct.c: the rung below conv_2d_1x1_s8 on the
    ladder of kernels chosen for memory (registered after it, before the lean variant, which
    keeps the layers of the long requantisation); the operator's registered traits, so in place
    it gets the reference kernel's staging as scratch."""
    if not takes_1x1(graph, op, reference):
        return None
    low = _variant(graph, op, reference, "conv_2d_1x1_s8_direct", "mcu_conv_2d_1x1_s8_direct", 0)
    if low is None or "short_shifts" not in fields(low.params):
        return None
    params = quad_stream(low.params, graph.tensors[op.inputs[0]].shape[3])
    # mcu_pointwise_pixels writes a concatenation's channel slice at the node's output stride,
    # and, not in place, pixels from the first on
    return replace(
        low,
        params=params,
        headers=(HEADER, "mcu/kernels/conv_2d.h"),
        output_stride=True,
        pixels_in_order=True,
    )


def quad_stream(params: tuple[tuple[str, Value], ...], depth: int) -> tuple[tuple[str, Value], ...]:
    """`widened_params` of the short requantisation plus, for conv_2d_1x1_s8_direct's groups of
    four channels (runtime_c/include/mcu/mat_mult_s8.h `stream`), a stream of 16 words a group:
    the four undoubled biases, then per channel its multiplier, rounding term
    (2 output offset + 1) << shift and shift; without `bias`, `multipliers` and `short_shifts`
    when the groups take every channel. No stream for depths not a multiple of 4 or fewer than
    four channels (the kernel then reads those arrays)."""
    found = dict(params)
    bias, mult, shifts, offset = (
        found["bias"],
        found["multipliers"],
        found["short_shifts"],
        found["output_offset"],
    )
    assert isinstance(bias, Array) and isinstance(mult, Array) and isinstance(shifts, Array)
    assert isinstance(offset, int)
    channels = len(bias.values)
    if depth % 4 or channels < 4:
        return params
    per = len(mult.values) > 1
    stream: list[int] = []
    for c0 in range(0, channels - 3, 4):
        stream += [int(bias.values[c]) >> 1 for c in range(c0, c0 + 4)]  # doubled: even
        for c in range(c0, c0 + 4):
            m, e = (int(a.values[c if per else 0]) for a in (mult, shifts))
            stream += [m, wrap_i32((2 * offset + 1) << e), e]
    if channels % 4:
        return (*params, ("stream", Array("int32_t", tuple(stream))))
    arrays = ("bias", "multipliers", "short_shifts")  # the stream holds them all
    return (
        *((k, v) for k, v in params if k not in arrays),
        ("stream", Array("int32_t", tuple(stream))),
    )
