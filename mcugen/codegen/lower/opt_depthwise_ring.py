"""The ring rung of int8 DEPTHWISE_CONV_2D (runtime_c/kernels/opt/depthwise_conv_2d_s8_ring.c):
the layers depthwise_conv_2d_s8 runs on its 3x3 path (strides 1 and 2, every right shift at least
1, sums within its requantisation's bound), one channel at a time over a ring of that channel's
widened lines, with the fast path's per-channel assembly.

On a layer's ladder of kernels chosen for memory (mcugen/kernel_choice.py) it sits between the
fast variant, whose band widens four channels (VWW, KWS: 0.9-6 KB a layer), and the lean one (no
scratch, but 11-24 instructions a MAC): its scratch (`ring_layout`) stays within one channel
plane of the input, the staging the reference kernel needs to run in place, so that it plans
no larger than the reference wherever the fast variant's scratch sets the peak. It runs in place
where the fast variant's band would (`in_place_ok`: the ring copies a channel's lines ahead of
its outputs), with no staging beyond its scratch. It is registered after depthwise_conv_2d_s8
(imported below) and before the lean variants (opt_lean.py imports this module), and takes only
layers the fast variant takes, so speed first never picks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from mcugen.codegen.lower import Lowered, Value
from mcugen.codegen.lower._variants import variant
from mcugen.codegen.lower.conv_2d import conv_staging_bytes
from mcugen.codegen.lower.opt_depthwise import (
    by_columns,
    depthwise_conv_2d_s8,  # registered first
    in_place_ok,
    planar_layer,
)
from mcugen.model.ir import Graph, Operator
from mcugen.model.traits import NO_TRAITS, OpTraits

#: outputs per channel a call of the kernel's lines aims at (MCU_DWR_OUTPUTS in the kernel)
RING_OUTPUTS = 64


@dataclass(frozen=True)
class RingLayout:
    """How the kernel runs a layer (`dwr_layout`): lines along columns or rows, output lines a
    call, and the scratch that takes."""

    columns: bool
    chunk: int
    scratch_bytes: int


def ring_bytes(chunk: int, s_across: int, bw: int) -> int:
    """The input lines a chunk of output lines reads, (chunk - 1) * s_across + 3, of bw int16
    entries (`dwr_bytes`)."""
    return 2 * ((chunk - 1) * s_across + 3) * bw


def _axis(
    ref: Mapping[str, Value], in_hw: tuple[int, int], out_hw: tuple[int, int], columns: bool
) -> tuple[int, int, int, int]:
    """(output lines, outputs a line, stride across lines, entries a ring line) along columns or
    rows (`dwr_axes`)."""
    along = 0 if columns else 1
    pads, strides = (ref["pad_h"], ref["pad_w"]), (ref["stride_h"], ref["stride_w"])
    pad, s_along, s_across = pads[along], strides[along], strides[1 - along]
    assert isinstance(pad, int) and isinstance(s_along, int) and isinstance(s_across, int)
    n = out_hw[along]
    bw = max(pad + in_hw[along], s_along * n + 2)
    return out_hw[1 - along], n, s_across, bw + (bw & 1)


def ring_layout(
    ref: Mapping[str, Value], in_hw: tuple[int, int], out_hw: tuple[int, int]
) -> RingLayout:
    """Columns where the fast path would run them (`by_columns`) and one line's ring fits one
    channel plane (in_h * in_w bytes), else rows; then the most output lines a call, up to
    RING_OUTPUTS outputs, whose scratch stays within the plane (at least one)."""
    budget = in_hw[0] * in_hw[1]
    columns = by_columns(in_hw, out_hw)
    lines, n, s_across, bw = _axis(ref, in_hw, out_hw, columns)
    if columns and ring_bytes(1, s_across, bw) > budget:
        columns = False
        lines, n, s_across, bw = _axis(ref, in_hw, out_hw, columns)
    want = min(lines, -(-RING_OUTPUTS // n))
    chunk = 1
    while chunk < want and ring_bytes(chunk + 1, s_across, bw) <= budget:
        chunk += 1
    return RingLayout(columns, chunk, ring_bytes(chunk, s_across, bw))


@variant(
    "depthwise_conv_2d_s8_ring",
    "DEPTHWISE_CONV_2D",
    handles="what depthwise_conv_2d_s8's 3x3 path takes (strides 1 and 2, right shifts at least "
    "1): one channel at a time over a ring of its lines, scratch within one channel plane; in "
    "place too",
)
def depthwise_conv_2d_s8_ring(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    fast = depthwise_conv_2d_s8(graph, op, reference)
    planar = planar_layer(graph, op, reference) if fast is not None else None
    if fast is None or planar is None:
        return None
    ref, in_hw, out_hw = planar
    layout = ring_layout(ref, in_hw, out_hw)
    shared = conv_staging_bytes(graph, op) is not None and in_place_ok(
        ref, in_hw, 3, out_hw, layout.columns
    )
    return replace(
        fast,
        function="mcu_depthwise_conv_2d_s8_ring",
        scratch_bytes=layout.scratch_bytes,
        variant="depthwise_conv_2d_s8_ring",
        sources=("opt/depthwise_conv_2d_s8_ring.c",),  # its headers: the fast variant's
        traits=OpTraits(staging_bytes=0) if shared else NO_TRAITS,
    )
