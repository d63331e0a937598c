"""The RAM and flash a firmware uses, by part, in the names every command prints (`RamUse`:
arena, model state, runtime state, stack; its pools and the external RAM) and the flash the
linker placed beyond the weights (`LinkedFlash`). plan/fit.py's verdict counts them; the sizes of
a linked ELF (firmware/sizes.py) fill the same types, so the figures agree by construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LinkedFlash:
    """Flash besides the weights, in bytes, as the linker placed it: code (vectors and .text) and
    tables (parameters, offsets, strings, initialised data)."""

    code: int
    tables: int


@dataclass(frozen=True)
class PoolUse:
    """One memory of a split arena (plan/pools): its pool, and the firmware's own RAM when the
    memory holds that too (`firmware`: stack, state and runtime), against the memory's size."""

    name: str
    pool: int
    firmware: int
    size: int
    buffers: int

    @property
    def used(self) -> int:
        return self.pool + self.firmware


@dataclass(frozen=True)
class RamUse:
    """What a firmware keeps in RAM, in the one vocabulary every command, the JSON and the HTML
    report use: the arena (all its pools together, each pool by memory when split), the model
    state (variable tensors kept between inferences), the runtime state (the app, runtime and
    board port's own RAM, with the model-sized tables and any input copy), the stack (reserved),
    their total against the board's RAM (`size`), and what lives outside it in external RAM
    (`slow`: paged buffers and a model state placed there). The planner's count and the linked
    ELF's give equal figures (tests/cli/test_same_figures.py)."""

    arena: int
    model_state: int
    runtime_state: int
    stack: int
    size: int
    pools: tuple[tuple[str, int], ...] = ()
    slow: int = 0
    slow_memory: str = ""
    slow_holds: str = ""  # what the external RAM holds, e.g. "paged buffers, input copy"

    @property
    def total(self) -> int:
        return self.arena + self.model_state + self.runtime_state + self.stack

    def parts(self) -> list[tuple[str, int]]:
        """(name, bytes) of what the RAM holds; the model state only when there is one."""
        parts = [
            ("arena", self.arena),
            ("model state", self.model_state),
            ("runtime state", self.runtime_state),
            ("stack", self.stack),
        ]
        return [(n, b) for n, b in parts if b or n != "model state"]

    def largest(self) -> str:
        return max(self.parts(), key=lambda p: (p[1], p[0]))[0]

    def parts_text(self, number_format: str = ",") -> str:
        """ "arena 147,744 = dtcm 49,440 + sram1 98,304, runtime state 7,456, stack 8,192"."""
        shown = []
        for name, value in self.parts():
            text = f"{name} {value:{number_format}}"
            if name == "arena" and self.pools:
                text += " = " + " + ".join(f"{m} {b:{number_format}}" for m, b in self.pools)
            shown.append(text)
        return ", ".join(shown)

    def slow_text(self) -> str:
        """ "; sdram 1,555,456 bytes (paged buffers, input copy)", or "" without one."""
        if not self.slow:
            return ""
        holds = f" ({self.slow_holds})" if self.slow_holds else ""
        return f"; {self.slow_memory or 'slow memory'} {self.slow:,} bytes{holds}"

    def text(self, number_format: str = ",") -> str:
        """ "RAM 163,392 of 327,680 bytes (arena 147,744 = dtcm 49,440 + sram1 98,304, runtime
        state 7,456, stack 8,192), 164,288 free; sdram 1,237,664 bytes"."""
        return (
            f"RAM {self.total:{number_format}} of {self.size:{number_format}} bytes "
            f"({self.parts_text(number_format)}), {room(self.size - self.total)}" + self.slow_text()
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "arena": self.arena,
            "arena_pools": dict(self.pools),
            "model_state": self.model_state,
            "runtime_state": self.runtime_state,
            "stack": self.stack,
            "total": self.total,
            "size": self.size,
            "free": self.size - self.total,
            "slow_memory": self.slow_memory or None,
            "slow": self.slow,
            "slow_holds": self.slow_holds or None,
        }


def room(spare: int) -> str:
    """ "N free" or "over by N"."""
    return f"{spare:,} free" if spare >= 0 else f"over by {-spare:,}"
