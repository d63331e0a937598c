"""Does a plan fit a board? The verdict `mcugen plan --board` prints and `mcugen build` checks
before anything is compiled.

RAM holds the arena, the persistent state (the variable tensors of SVDF and LSTM layers and a
training graph's weights, plan/persistent.py, a 16-byte multiple in the model state struct; unless
it lives in the board's external RAM, plan/state_memory.py), the stack and the firmware's
own state, counted term by term (`firmware_ram`: the app, runtime and board port's fixed part,
measured per port in board.toml and checked against the linker by tests/unit/test_fit.py, plus the
MLPerf runner's input copy, the per-operator profile table and a dynamic allocator's offset
tables), so the verdict equals the linked firmware's RAM to the byte. Flash holds the weights,
the code and the tables and parameters: code depends on the compiler, so `mcugen plan --board`
links the firmware to measure it (`linked`); without the toolchain only the weights are known and
the verdict says so. The arena is the one the firmware
declares for the chosen allocator: static offsets need the layout's extent, while `compacting` and
`planned` move whole buffers between operators and so run in the order's peak live bytes.

The board arrives as plain numbers (`BoardLimits`): this module reads no board files and knows
nothing of the firmware project.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mcugen.errors import DoesNotFit, McugenError, UnsupportedError
from mcugen.model.ir import Graph
from mcugen.plan import dynamic
from mcugen.plan.buffers import live_bytes_per_step
from mcugen.plan.memory_plan import MemoryPlan


@dataclass(frozen=True)
class BoardLimits:
    """What a board offers a model, in bytes: RAM and flash, the stack the firmware reserves, and
    the RAM its app, runtime and port use whatever the model (`firmware_ram`)."""

    name: str
    ram_size: int
    flash_size: int
    stack: int
    firmware_ram: int


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
class Fit:
    """Whether a plan fits a board: RAM for arena, state, stack and the runtime's own state; flash
    for weights, code and tables (`linked`), or the weights alone when nothing was linked."""

    board: str
    arena: int
    stack: int
    ram_size: int
    weights: int
    flash_size: int
    runtime: int
    unsupported: str = ""  # why the runtime cannot run the model at all ("" when it can)
    state: int = 0  # the persistent area of the variable tensors, a multiple of 16 bytes
    linked: LinkedFlash | None = None  # code and tables as the linker placed them
    unlinked: str = "not linked yet"  # why flash beyond the weights is unknown (when not linked)
    pools: tuple[PoolUse, ...] = ()  # a split arena, per memory; () for one arena
    pools_error: str = ""  # why the arena could not be split (MemoryPlan.pools_error)
    #: weights in a memory-mapped external flash (not counted in `weights`), and its name
    external_weights: int = 0
    external_memory: str = ""
    #: the state when it lives outside the RAM (not counted in `state`), and its memory
    external_state: int = 0
    state_memory: str = ""
    #: what to do when the state makes the RAM overflow (the board's options, target_fit)
    state_hint: str = ""

    @property
    def flash_need(self) -> int:
        extra = self.linked.code + self.linked.tables if self.linked else 0
        return self.weights + extra

    def _flash_parts(self, number_format: str = ",") -> str:
        if self.linked is None:
            return f"weights {self.weights:{number_format}}; code not counted: {self.unlinked}"
        return (
            f"weights {self.weights:{number_format}}, code {self.linked.code:{number_format}}, "
            f"tables {self.linked.tables:{number_format}}"
        )

    @property
    def ram_need(self) -> int:
        return self.arena + self.state + self.stack + self.runtime

    def _ram_parts(self, number_format: str = ",") -> str:
        """What the RAM holds, e.g. "arena 1,344, state 80, stack 8,192, runtime 4,320" (state
        only for a model with variables)."""
        parts = (("arena", self.arena), ("state", self.state), ("stack", self.stack))
        shown = [
            (name, v) for name, v in (*parts, ("runtime", self.runtime)) if v or name != "state"
        ]
        return ", ".join(f"{name} {value:{number_format}}" for name, value in shown)

    def _ram_hint(self) -> str:
        # a training graph's weights and optimiser state, or a state without which it would fit
        if self.state > self.arena or self.ram_need - self.state <= self.ram_size:
            return (
                "the state (variable tensors) is the largest part: with mcugen train, fewer "
                "trainable layers, no --momentum and --accumulate 1 keep less"
                + (f"; {self.state_hint}" if self.state_hint else "")
            )
        return "the arena is the largest part: try a smaller model or input resolution"

    @property
    def fits(self) -> bool:
        memory = self.ram_need <= self.ram_size and self.flash_need <= self.flash_size
        pools = all(p.used <= p.size for p in self.pools)
        return memory and pools and not self.unsupported

    def problem(self) -> McugenError | None:
        """The one-line error when it does not fit, else None."""
        if self.unsupported:
            return UnsupportedError(
                f"model cannot be built for {self.board}: {self.unsupported}",
                hint="see the README's list of supported operators",
            )
        over = next((p for p in self.pools if p.used > p.size), None)
        if over is not None:
            return DoesNotFit(
                f"model does not fit {self.board}: {over.name} needs {over.used} bytes (pool "
                f"{over.pool}, firmware {over.firmware}), it has {over.size}; over by "
                f"{over.used - over.size} bytes",
                hint="the arena is the largest part: try a smaller model or input resolution",
            )
        if self.ram_need > self.ram_size:
            split = f"; pools: {self.pools_error}" if self.pools_error else ""
            return DoesNotFit(
                f"model does not fit {self.board}: RAM needs at least {self.ram_need} bytes "
                f"({self._ram_parts('')}), the board has {self.ram_size}; over by "
                f"{self.ram_need - self.ram_size} bytes{split}",
                hint=self._ram_hint(),
            )
        if self.flash_need > self.flash_size:
            return DoesNotFit(
                f"model does not fit {self.board}: flash needs {self.flash_need} bytes "
                f"({self._flash_parts('')}), the board has {self.flash_size}; over by "
                f"{self.flash_need - self.flash_size} bytes",
                hint="quantize the weights to int8 or prune the model",
            )
        return None

    def summary(self) -> str:
        """One line: fits or not, and by how much, RAM and flash."""
        ram = (
            f"RAM {self.ram_need:,} of {self.ram_size:,} bytes ({self._ram_parts()}), "
            f"{_room(self.ram_size - self.ram_need)}"
        )
        flash = (
            f"flash {self.flash_need:,} of {self.flash_size:,} bytes ({self._flash_parts()}), "
            f"{_room(self.flash_size - self.flash_need)}"
        )
        if self.unsupported:
            return f"cannot be built for {self.board}: {self.unsupported}; if it could, {ram}"
        verdict = "fits" if self.fits else "does NOT fit"
        external = (
            f"; weights {self.external_weights:,} bytes in {self.external_memory}"
            if self.external_memory
            else ""
        )
        if self.state_memory:
            external += f"; state {self.external_state:,} bytes in {self.state_memory}"
        return f"{verdict} {self.board}: {ram}; {flash}{external}{self._pools_line()}"

    def _pools_line(self) -> str:
        """Per memory of a split arena: "; dtcm 131,072 of 131,072 (pool, 12 buffers), ..."."""
        if not self.pools:
            return ""
        parts = [
            f"{p.name} {p.used:,} of {p.size:,} (pool {p.pool:,}, {p.buffers} "
            + ("buffer" if p.buffers == 1 else "buffers")
            + (f", firmware {p.firmware:,})" if p.firmware else ")")
            for p in self.pools
        ]
        return "; memories: " + ", ".join(parts)

    def as_json(self) -> dict[str, Any]:
        """The verdict as `mcugen plan --json` reports it under "fit"."""
        return {
            "board": self.board,
            "arena": self.arena,
            "state": self.state,
            "stack": self.stack,
            "ram_size": self.ram_size,
            "weights": self.weights,
            "code": self.linked.code if self.linked else None,
            "tables": self.linked.tables if self.linked else None,
            "flash_need": self.flash_need,
            "flash_size": self.flash_size,
            "flash_linked": self.linked is not None,
            "ram_need": self.ram_need,
            "fits": self.fits,
            "unsupported": self.unsupported or None,
            "external_weights": self.external_weights,
            "external_memory": self.external_memory or None,
            "external_state": self.external_state,
            "state_memory": self.state_memory or "ram",
            "pools": {
                p.name: {"used": p.used, "size": p.size, "pool": p.pool, "firmware": p.firmware}
                for p in self.pools
            },
        }


def _room(spare: int) -> str:
    return f"{spare:,} free" if spare >= 0 else f"over by {-spare:,}"


def allocator_arena(plan: MemoryPlan, allocator: str) -> int:
    """The arena the firmware declares for `plan` under `allocator`. Static offsets: the layout's
    extent (`plan.arena_bytes`). `compacting` and `planned` move whole buffers and run in their
    peak live bytes, buffer profiles ignored: `plan.lower_bound` for a plan made for them (no
    profiles), and the arena `dynamic.plan_dynamic` reaches by construction."""
    if plan.paging is not None:  # the fast arena, and the slow memory when it is in RAM too
        slow = 0 if plan.paging.slow.external else plan.paging.slow_bytes
        return plan.paging.fast_bytes + slow
    if allocator == dynamic.STATIC:
        return plan.arena_bytes
    whole = [replace(b, profile=()) for b in plan.buffers]
    return max(live_bytes_per_step(whole, len(plan.order)), default=0)


def firmware_ram(graph: Graph, plan: MemoryPlan, allocator: str, board: BoardLimits) -> int:
    """RAM of the firmware besides arena and stack, as the linker will place it: the fixed part,
    the MLPerf runner's copy of input 0 (runtime_c/app/mlperf.c; none when the plan keeps the
    input in the arena), 8 bytes of profile ticks per
    operator (app/firmware.c, an even count), and with a dynamic allocator its state and offset
    tables (templates/model.c.j2: a 24-byte header, 4 bytes per tensor and per buffer, 2 bytes
    per buffer). Each of these is a multiple of 16 bytes in the firmware and every RAM section
    starts and ends on 16 (templates/link.ld.j2), so no padding depends on the model."""
    inputs = graph.tensors[graph.inputs[0]].nbytes if graph.inputs else 0
    total = board.firmware_ram + (0 if plan.input_kept else _align(max(inputs, 1), 16))
    total += 8 * _align(max(len(graph.operators), 1), 2)
    if allocator != dynamic.STATIC:
        buffers = max(len(plan.buffers), 1)
        total += _align(24 + 4 * len(graph.tensors) + 6 * buffers, 16)
    return total


def _align(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def fit_of(graph: Graph, plan: MemoryPlan, allocator: str, weights: int, board: BoardLimits) -> Fit:
    """The verdict for `plan` of `graph` run with `allocator` (arena as `allocator_arena` says)
    and `weights` bytes of constants on `board`; a paged plan runs with the paged allocator."""
    if plan.paging is not None:
        allocator = dynamic.PAGED
    runtime = firmware_ram(graph, plan, allocator, board)
    fit = Fit(
        board.name,
        allocator_arena(plan, allocator),
        board.stack,
        board.ram_size,
        weights,
        board.flash_size,
        runtime,
        state=plan.persistent.ram_bytes,
        pools_error=plan.pools_error,
        external_state=plan.persistent.bytes - plan.persistent.ram_bytes,
        state_memory=plan.persistent.memory,
    )
    split = plan.pools
    if allocator != dynamic.STATIC or split is None or not split.split:
        return fit
    firmware = board.stack + runtime + plan.persistent.ram_bytes
    pools = tuple(
        PoolUse(
            p.name,
            p.size,
            firmware if p.memory.reserved else 0,
            p.memory.size + p.memory.reserved,
            len(p.offsets),
        )
        for p in split.pools
    )
    ram = sum(p.size for p in pools)
    return replace(fit, arena=sum(p.pool for p in pools), ram_size=ram, pools=pools)


def weight_bytes(graph: Graph) -> int:
    """Bytes of the constant tensors the operators of `graph` read."""
    used = {t for op in graph.operators for t in op.inputs if t >= 0}
    return sum(len(graph.tensors[t].data or b"") for t in used if graph.tensors[t].is_constant)
