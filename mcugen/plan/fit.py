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

The board arrives as plain numbers (`MemoryTarget`, plan/target.py): this module reads no board
files and knows nothing of the firmware project.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mcugen.errors import DoesNotFit, McugenError, UnsupportedError
from mcugen.model.ir import Graph
from mcugen.plan import dynamic
from mcugen.plan.buffers import live_bytes_per_step
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.ram_use import LinkedFlash, PoolUse, RamUse, room
from mcugen.plan.target import MemoryTarget


@dataclass(frozen=True)
class Fit:
    """Whether a plan fits a board: RAM for arena, state, stack and the runtime's own state; flash
    for weights, code and tables (`linked`), or the weights alone when nothing was linked."""

    memory: MemoryTarget  # the RAM and flash it is checked against, and the stack
    arena: int
    weights: int
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
    #: the QEMU machine when the verdict is for the board's twin, not the board itself
    twin: str = ""
    #: memories the plan needs that the board's port does not set up yet (the board only)
    not_ready: str = ""
    #: bytes of paged buffers in an external RAM (outside `ram_size`), and its name
    slow_bytes: int = 0
    slow_memory: str = ""
    slow_holds: str = ""  # what the external RAM holds (`slow_contents`)

    @property
    def board(self) -> str:
        return self.memory.board

    @property
    def stack(self) -> int:
        return self.memory.stack

    @property
    def ram_size(self) -> int:
        return self.memory.ram_size

    @property
    def flash_size(self) -> int:
        return self.memory.flash_size

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

    def ram(self) -> RamUse:
        """The RAM in the vocabulary every command shares (`RamUse`)."""
        slow = self.slow_bytes + self.external_state
        memory = self.slow_memory or (self.state_memory if self.external_state else "")
        return RamUse(
            self.arena,
            self.state,
            self.runtime,
            self.stack,
            self.ram_size,
            tuple((p.name, p.pool) for p in self.pools),
            slow,
            memory,
            self.slow_holds,
        )

    @property
    def target(self) -> str:
        """What the verdict is for: "nucleo-f767", or "disco-f746ng's twin (mps2-an500)"."""
        return f"{self.board}'s twin ({self.twin})" if self.twin else self.board

    def _ram_hint(self) -> str:
        """What to shrink: the largest part of the RAM, named as `RamUse` names it."""
        largest = self.ram().largest()
        if largest == "model state":
            return (
                "the model state (variable tensors) is the largest part: with mcugen train, "
                "fewer trainable layers, no --momentum and --accumulate 1 keep less"
                + (f"; {self.state_hint}" if self.state_hint else "")
            )
        if largest == "runtime state":
            return (
                "the runtime state is the largest part: it holds the model's input when the "
                "arena cannot (a large input: give the model a smaller one, or --ram-budget to "
                "page the arena)"
            )
        if largest == "stack":
            return "the stack is the largest part: the board reserves it (board.toml)"
        return "the arena is the largest part: try a smaller model or input resolution"

    @property
    def fits(self) -> bool:
        memory = self.ram_need <= self.ram_size and self.flash_need <= self.flash_size
        pools = all(p.used <= p.size for p in self.pools)
        return memory and pools and not self.unsupported and not self.not_ready

    def problem(self) -> McugenError | None:
        """The one-line error when it does not fit, else None."""
        if self.unsupported:
            return UnsupportedError(
                f"model cannot be built for {self.board}: {self.unsupported}",
                hint="`mcugen ops` lists the operators mcugen runs",
            )
        over = next((p for p in self.pools if p.used > p.size), None)
        if over is not None:
            return DoesNotFit(
                f"model does not fit {self.target}: {over.name} needs {over.used} bytes (pool "
                f"{over.pool}, firmware {over.firmware}), it has {over.size}; over by "
                f"{over.used - over.size} bytes",
                hint="the arena is the largest part: try a smaller model or input resolution",
            )
        if self.ram_need > self.ram_size:
            split = f"; pools: {self.pools_error}" if self.pools_error else ""
            ram = self.ram()
            return DoesNotFit(
                f"model does not fit {self.target}: RAM needs at least {ram.total} bytes "
                f"({ram.parts_text('')}), the board has {ram.size}; over by "
                f"{ram.total - ram.size} bytes{split}",
                hint=self._ram_hint(),
            )
        if self.flash_need > self.flash_size:
            return DoesNotFit(
                f"model does not fit {self.target}: flash needs {self.flash_need} bytes "
                f"({self._flash_parts('')}), the board has {self.flash_size}; over by "
                f"{self.flash_need - self.flash_size} bytes",
                hint=self._flash_hint(),
            )
        if self.not_ready:
            return DoesNotFit(
                f"{self.board}'s port does not set up its {self.not_ready} yet, and this plan "
                "needs it",
                hint="run it on the board's twin (--emulate)",
            )
        return None

    def _flash_hint(self) -> str:
        """The largest part of the flash and what shrinks it."""
        if self.linked is None or self.weights >= self.linked.code + self.linked.tables:
            return "the weights are the largest part: quantize them to int8 or prune the model"
        if self.linked.code >= self.linked.tables:
            return "the code is the largest part: --kernels reference links smaller kernels"
        return (
            "the tables and parameters are the largest part: --patch-overhead 0 drops the "
            "patch stage's per-tile tables"
        )

    def summary(self) -> str:
        """One line: fits or not, what for, and by how much, RAM and flash."""
        ram = self.ram().text()
        flash = (
            f"flash {self.flash_need:,} of {self.flash_size:,} bytes ({self._flash_parts()}), "
            f"{room(self.flash_size - self.flash_need)}"
        )
        if self.unsupported:
            return f"cannot be built for {self.board}: {self.unsupported}; if it could, {ram}"
        verdict = "fits" if self.fits else "does NOT fit"
        if self.not_ready and self.ram_need <= self.ram_size:
            verdict = (
                f"does NOT fit (its port does not set up {self.not_ready} yet; its twin, "
                "--emulate, has it)"
            )
        external = (
            f"; weights {self.external_weights:,} bytes in {self.external_memory}"
            if self.external_memory
            else ""
        )
        return f"{verdict} {self.target}: {ram}; {flash}{external}{self._pools_line()}"

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
            "twin": self.twin or None,
            "not_ready": self.not_ready or None,
            "ram": self.ram().as_json(),
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


#: The smallest arena array the firmware declares (templates/model.c.j2: C has no empty array),
#: e.g. for a paged plan that keeps every buffer in the external RAM.
MIN_ARENA_BYTES = 16


def allocator_arena(plan: MemoryPlan, allocator: str) -> int:
    """The arena the firmware declares for `plan` under `allocator`. Static offsets: the layout's
    extent (`plan.arena_bytes`). `compacting` and `planned` move whole buffers and run in their
    peak live bytes, buffer profiles ignored: `plan.lower_bound` for a plan made for them (no
    profiles), and the arena `dynamic.plan_dynamic` reaches by construction."""
    if plan.paging is not None:  # the fast arena, and the slow memory when it is in RAM too
        slow = 0 if plan.paging.slow.external else plan.paging.slow_bytes
        return max(plan.paging.fast_bytes, MIN_ARENA_BYTES) + slow
    if allocator == dynamic.STATIC:
        return max(plan.arena_bytes, MIN_ARENA_BYTES)
    whole = [replace(b, profile=()) for b in plan.buffers]
    return max(live_bytes_per_step(whole, len(plan.order)), default=0)


def firmware_ram(graph: Graph, plan: MemoryPlan, allocator: str, board: MemoryTarget) -> int:
    """RAM of the firmware besides arena and stack, as the linker will place it: the fixed part,
    the MLPerf runner's copy of input 0 (runtime_c/app/mlperf.c; none when the plan keeps the
    input in the arena), 8 bytes of profile ticks per
    operator (app/firmware.c, an even count), and with a dynamic allocator its state and offset
    tables (templates/model.c.j2: a 24-byte header, 4 bytes per tensor and per buffer, 2 bytes
    per buffer). Each of these is a multiple of 16 bytes in the firmware and every RAM section
    starts and ends on 16 (templates/link.ld.j2), so no padding depends on the model."""
    total = board.firmware_ram + input_copy_bytes(graph, plan, "ram")
    total += 8 * _align(max(len(graph.operators), 1), 2)
    if allocator != dynamic.STATIC:
        buffers = max(len(plan.buffers), 1)
        total += _align(24 + 4 * len(graph.tensors) + 6 * buffers, 16)
    return total


def input_copy_in_slow_memory(plan: MemoryPlan) -> bool:
    """The MLPerf runner's copy of input 0 goes where the arena's paged buffers go, when the plan
    pages to an external RAM: a large input (a 602,112-byte float image) must not stay in the
    RAM the paging frees. It is only copied into the arena before each inference."""
    paging = plan.paging
    return paging is not None and paging.slow.external and paging.slow_bytes > 0


def slow_contents(plan: MemoryPlan) -> str:
    """What a plan puts in the external RAM, e.g. "paged buffers, input copy, model state"."""
    paging = plan.paging
    holds = []
    if paging is not None and paging.slow.external and paging.slow_bytes:
        holds.append("paged buffers")
        if input_copy_in_slow_memory(plan) and not plan.input_kept:
            holds.append("input copy")
    if plan.persistent.bytes > plan.persistent.ram_bytes:
        holds.append("model state")
    return ", ".join(holds)


def input_copy_bytes(graph: Graph, plan: MemoryPlan, memory: str) -> int:
    """Bytes of the runner's input copy in `memory` ("ram" or "slow"): none when the plan keeps
    the input in the arena, a multiple of 16 otherwise (runtime_c/app/mlperf.c)."""
    if plan.input_kept or (memory == "slow") != input_copy_in_slow_memory(plan):
        return 0
    inputs = graph.tensors[graph.inputs[0]].nbytes if graph.inputs else 0
    return _align(max(inputs, 1), 16)


def _align(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def fit_of(
    graph: Graph, plan: MemoryPlan, allocator: str, weights: int, board: MemoryTarget
) -> Fit:
    """The verdict for `plan` of `graph` run with `allocator` (arena as `allocator_arena` says)
    and `weights` bytes of constants on `board`; a paged plan runs with the paged allocator."""
    if plan.paging is not None:
        allocator = dynamic.PAGED
    runtime = firmware_ram(graph, plan, allocator, board)
    fit = Fit(
        board,
        allocator_arena(plan, allocator),
        weights,
        runtime,
        state=plan.persistent.ram_bytes,
        pools_error=plan.pools_error,
        external_state=plan.persistent.bytes - plan.persistent.ram_bytes,
        state_memory=plan.persistent.memory,
        slow_holds=slow_contents(plan),
    )
    paging = plan.paging
    if paging is not None and paging.slow.external and paging.slow_bytes:
        slow = paging.slow_bytes + input_copy_bytes(graph, plan, "slow")
        fit = replace(fit, slow_bytes=slow, slow_memory=paging.slow.name)
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
    return replace(fit, arena=sum(p.pool for p in pools), pools=pools)


def weight_bytes(graph: Graph) -> int:
    """Bytes of the constant tensors the operators of `graph` read."""
    used = {t for op in graph.operators for t in op.inputs if t >= 0}
    return sum(len(graph.tensors[t].data or b"") for t in used if graph.tensors[t].is_constant)
