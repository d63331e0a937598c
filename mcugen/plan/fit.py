"""Does a plan fit a board? The verdict `mcugen plan --board` prints and `mcugen build` checks
before anything is compiled.

RAM holds the arena, the stack and the firmware's own state; flash holds the weights (code comes on
top: `mcugen build` measures it after linking). The arena is the one the firmware declares for the
chosen allocator: static offsets need the layout's extent, while `compacting` and `planned` move
whole buffers between operators and so run in the order's peak live bytes.

The board arrives as plain numbers (`BoardLimits`): this module reads no board files and knows
nothing of the firmware project.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mcugen.errors import BuildError
from mcugen.model.ir import Graph
from mcugen.plan import dynamic
from mcugen.plan.buffers import live_bytes_per_step
from mcugen.plan.memory_plan import MemoryPlan


@dataclass(frozen=True)
class BoardLimits:
    """What a board offers a model, in bytes: RAM and flash, the stack the firmware reserves, and
    the RAM the firmware itself uses besides arena and stack (`runtime`)."""

    name: str
    ram_size: int
    flash_size: int
    stack: int
    runtime: int


@dataclass(frozen=True)
class Fit:
    """Whether a plan fits a board before anything is compiled: RAM for arena, stack and the
    runtime's own state, flash for the weights (code comes on top; `build` measures it)."""

    board: str
    arena: int
    stack: int
    ram_size: int
    weights: int
    flash_size: int
    runtime: int

    @property
    def ram_need(self) -> int:
        return self.arena + self.stack + self.runtime

    @property
    def fits(self) -> bool:
        return self.ram_need <= self.ram_size and self.weights <= self.flash_size

    def problem(self) -> BuildError | None:
        """The one-line error when it does not fit, else None."""
        if self.ram_need > self.ram_size:
            return BuildError(
                f"model does not fit {self.board}: RAM needs at least {self.ram_need} bytes "
                f"(arena {self.arena}, stack {self.stack}, runtime {self.runtime}), the board "
                f"has {self.ram_size}; over by {self.ram_need - self.ram_size} bytes",
                hint="the arena is the largest part: try a smaller model or input resolution",
            )
        if self.weights > self.flash_size:
            return BuildError(
                f"model does not fit {self.board}: weights need {self.weights} bytes of flash, "
                f"the board has {self.flash_size}; over by {self.weights - self.flash_size} bytes",
                hint="quantize the weights to int8 or prune the model",
            )
        return None

    def summary(self) -> str:
        """One line: fits or not, and by how much, RAM and flash."""
        ram = (
            f"RAM {self.ram_need:,} of {self.ram_size:,} bytes (arena {self.arena:,}, stack "
            f"{self.stack:,}, runtime {self.runtime:,}), {_room(self.ram_size - self.ram_need)}"
        )
        flash = (
            f"weights {self.weights:,} of {self.flash_size:,} bytes of flash, "
            f"{_room(self.flash_size - self.weights)}"
        )
        verdict = "fits" if self.fits else "does NOT fit"
        return f"{verdict} {self.board}: {ram}; {flash}"

    def as_json(self) -> dict[str, Any]:
        """The verdict as `mcugen plan --json` reports it under "fit"."""
        return {
            "board": self.board,
            "arena": self.arena,
            "stack": self.stack,
            "ram_size": self.ram_size,
            "weights": self.weights,
            "flash_size": self.flash_size,
            "ram_need": self.ram_need,
            "fits": self.fits,
        }


def _room(spare: int) -> str:
    return f"{spare:,} free" if spare >= 0 else f"over by {-spare:,}"


def allocator_arena(plan: MemoryPlan, allocator: str) -> int:
    """The arena the firmware declares for `plan` under `allocator`. Static offsets: the layout's
    extent (`plan.arena_bytes`). `compacting` and `planned` move whole buffers and run in their
    peak live bytes, buffer profiles ignored: `plan.lower_bound` for a plan made for them (no
    profiles), and the arena `dynamic.plan_dynamic` reaches by construction."""
    if allocator == dynamic.STATIC:
        return plan.arena_bytes
    whole = [replace(b, profile=()) for b in plan.buffers]
    return max(live_bytes_per_step(whole, len(plan.order)), default=0)


def fit_of(plan: MemoryPlan, allocator: str, weights: int, board: BoardLimits) -> Fit:
    """The verdict for `plan` run with `allocator` (arena as `allocator_arena` says) and
    `weights` bytes of constants on `board`."""
    return Fit(
        board.name,
        allocator_arena(plan, allocator),
        board.stack,
        board.ram_size,
        weights,
        board.flash_size,
        board.runtime,
    )


def weight_bytes(graph: Graph) -> int:
    """Bytes of the constant tensors the operators of `graph` read."""
    used = {t for op in graph.operators for t in op.inputs if t >= 0}
    return sum(len(graph.tensors[t].data or b"") for t in used if graph.tensors[t].is_constant)
