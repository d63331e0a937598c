"""The persistent state area: where the variable tensors (SVDF and LSTM state) live.

A variable is read and updated by its operator at every invoke and must keep its value from one
invoke to the next, so it is alive at every step of every invoke: nothing may ever overlap it. The
arena is re-used within each invoke, so variables do not go there; they get an area of their own
(in TFLM terms, the persistent tail of the arena), packed one after the other in tensor order,
each aligned to `ALIGN` bytes, the area's size rounded up to `ALIGN` (it opens the 16-byte aligned
model state struct). That layout is optimal up to the alignment padding: every variable is alive
together with every other, so the area can be no smaller than the sum of their sizes
(`lower_bound`). Complexity O(variables).

At init, and on `mcu_reset_variables`, the runtime fills each variable with `reset_byte`, as TFLM's
`ResetVariableTensors` does: the zero point for int8, 0 for other types. TFLM ignores a buffer the
file may give a variable (it allocates and resets the variable's own memory), and so does mcugen.

The area lives in the board's RAM unless `memory` names another memory (a training state too large
for the RAM goes to the board's SDRAM: plan/state_memory.py); kernels address it in place there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from mcugen.model.ir import Graph

ALIGN = 16


class PersistentInvalid(AssertionError):
    """An inconsistent persistent layout: a bug in mcugen, not a user error."""


@dataclass(frozen=True)
class PersistentLayout:
    """Offsets of the variable tensors in the persistent state area and its size."""

    offsets: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    sizes: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    bytes: int = 0
    #: the memory the area lives in: "" for the RAM, else a board memory's name (plan/state_memory)
    memory: str = ""

    @property
    def in_ram(self) -> bool:
        return not self.memory

    @property
    def ram_bytes(self) -> int:
        """The area's bytes in the RAM: all of it, or none when it lives elsewhere."""
        return self.bytes if self.in_ram else 0

    @property
    def lower_bound(self) -> int:
        """The summed sizes: every variable is alive at once, no layout is smaller."""
        return sum(self.sizes.values())

    def validate(self, graph: Graph) -> None:
        """Every variable the operators use has an aligned place; no two share a byte."""
        if set(self.offsets) != set(graph.variable_tensors()):
            raise PersistentInvalid("the persistent area does not hold exactly the variables")
        spans = sorted((self.offsets[t], self.offsets[t] + self.sizes[t], t) for t in self.offsets)
        for (_, end, t), (next_start, _, u) in zip(spans, spans[1:], strict=False):
            if next_start < end:
                raise PersistentInvalid(f"variables {t} and {u} overlap in the persistent area")
        for start, end, t in spans:
            if start % ALIGN or end > self.bytes or self.sizes[t] != graph.tensors[t].nbytes:
                raise PersistentInvalid(f"variable {t} is misplaced at {start}")


def persistent_layout(graph: Graph) -> PersistentLayout:
    """The variables of `graph` packed in tensor order, each at an `ALIGN`-byte boundary."""
    offsets: dict[int, int] = {}
    sizes: dict[int, int] = {}
    end = 0
    for t in graph.variable_tensors():
        start = -(-end // ALIGN) * ALIGN
        offsets[t] = start
        sizes[t] = graph.tensors[t].nbytes
        end = start + sizes[t]
    total = -(-end // ALIGN) * ALIGN  # fit.py counts the firmware RAM to the byte
    return PersistentLayout(MappingProxyType(offsets), MappingProxyType(sizes), total)


def reset_byte(graph: Graph, tensor: int) -> int:
    """The byte TFLM's ResetVariableTensors fills a variable with (memset): the zero point of an
    int8 tensor, else 0."""
    t = graph.tensors[tensor]
    if t.dtype == "int8" and t.quant is not None and t.quant.zero_points:
        return t.quant.zero_points[0] & 0xFF
    return 0
