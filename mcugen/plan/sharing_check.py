"""The check that every output sharing bytes with an input of its operator does so the way the
kernel declares (`OpTraits`): part of `MemoryPlan.validate`."""

from __future__ import annotations

from collections.abc import Mapping

from mcugen.model.ir import Graph, Operator, element_size
from mcugen.model.traits import OpTraits


class PlanInvalid(AssertionError):
    """A planner produced an inconsistent plan: a bug in mcugen, not a user error."""


def check_sharing(
    graph: Graph,
    op: Operator,
    kind: OpTraits,
    offsets: Mapping[int, int],
    scratch: Mapping[int, int],
) -> None:
    """Every input whose bytes meet an output's is shared the way the kernel declares."""
    for y in op.outputs:
        size = graph.tensors[y].nbytes if y >= 0 else 0
        if y not in offsets or size == 0:
            continue
        block = 0  # where input k starts in the output when the inputs are its blocks
        channel = 0  # where its first pixel starts when they are slices of the last axis
        width = element_size(graph.tensors[y].dtype)
        for k, x in enumerate(op.inputs):
            x_size = graph.tensors[x].nbytes if x >= 0 else 0
            if kind.channel_slices and start_of(graph, x, offsets) == offsets[y] + channel:
                channel += graph.tensors[x].shape[-1] * width
                continue  # its producer wrote its pixels there, at the output's stride
            if x >= 0 and graph.tensors[x].shape:
                channel += graph.tensors[x].shape[-1] * width
            start = offsets.get(x, -1)
            meets = start >= 0 and x_size > 0
            if meets and start < offsets[y] + size and offsets[y] < start + x_size:
                at = start - offsets[y]
                if not _declared(kind, k, at, block, scratch.get(op.index, 0)):
                    raise PlanInvalid(
                        f"{op.label} writes tensor {y} over input {x} (at {at:+} bytes), which its "
                        "kernel does not allow"
                        + (
                            f" without a staging scratch of {kind.staging_bytes}"
                            if kind.staging_bytes is not None and k == 0 and at == 0
                            else ""
                        )
                        + (
                            f" closer than {kind.input_after} bytes"
                            if kind.input_after is not None and k == 0 and at > 0
                            else ""
                        )
                    )
            block += x_size


def _declared(kind: OpTraits, k: int, at: int, block: int, scratch: int) -> bool:
    """Input k at `at` bytes from the output's start is a sharing the traits allow."""
    if kind.input_blocks and at == block:
        return True
    if k == 0 and kind.input_after is not None and at > 0 and at >= kind.input_after:
        return True  # the output runs over its input from far enough before it
    if at != 0:
        return False
    if k == 0 and (kind.view or kind.grows_over_input):
        return True
    if k in kind.overwrites:
        return True
    return k == 0 and kind.staging_bytes is not None and scratch >= kind.staging_bytes


def start_of(graph: Graph, x: int, offsets: Mapping[int, int]) -> int:
    """Tensor `x`'s offset, -1 when it has none or no bytes."""
    return offsets.get(x, -1) if x >= 0 and graph.tensors[x].nbytes > 0 else -1
