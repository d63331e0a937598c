"""What memory a plan may use, as one object: `MemoryTarget` (issue 33).

Every stage that needs a board's memory asks the target: the order search and layout nothing, pool
assignment its internal memories (`pool_memories`), paging its fast and slow memories with their
costs (`paging_costs`), the model state's placement its external RAM (`state_memory`), the fit
verdict and patch stages its RAM, flash, stack and the firmware's fixed RAM. The target is built in
one place, `memory_target`, from a board (boards/<name>/board.toml through `boards.Target`), from
the host (nothing but an optional RAM budget), or written out by a test as plain numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcugen.plan.paging.target import PagingCosts, SlowMemory
from mcugen.plan.pools.problem import PoolMemory

if TYPE_CHECKING:
    from mcugen.boards import Target

#: Memories pool assignment may use: internal RAM the kernels address in place.
POOL_KINDS = ("TCM", "SRAM")
#: Memories paging may use as its slow memory: external RAM on a bus of its own.
SLOW_KINDS = ("SDRAM", "PSRAM")
#: The host's nominal costs, cycles per byte (fast, slow): it has no memories to cite.
HOST_RATES = (0.25, 1.0)


@dataclass(frozen=True)
class TargetMemory:
    """One memory of the target and what using it costs (cycles per byte; picojoules per byte
    when measured, else None). `mapped`: kernels may work on buffers there in place."""

    name: str
    kind: str
    origin: int
    size: int
    read_cycles_per_byte: float
    write_cycles_per_byte: float
    mapped: bool = True
    writable: bool = True
    energy_pj_per_byte: float | None = None


@dataclass(frozen=True)
class MemoryTarget:
    """What a plan may use, in bytes: the RAM region (where the arena, the firmware's RAM and the
    stack live) and the flash, the stack the firmware reserves, the RAM its app, runtime and port
    take whatever the model (`firmware_ram`), the memories with their costs, the core's energy per
    cycle, and the user's cap on the arena's fast memory (`ram_budget`, None: none).
    `host`: the build machine, which has no memories to cite (nominal paging costs only).
    A `ram_size` of 0 leaves the RAM total unknown (a library built for memories only)."""

    board: str
    ram_size: int = 0
    flash_size: int = 0
    stack: int = 0
    firmware_ram: int = 0
    memories: tuple[TargetMemory, ...] = ()
    ram_origin: int = 0
    pj_per_cycle: float | None = None
    ram_budget: int | None = None
    host: bool = False

    @property
    def arena_room(self) -> int:
        """The RAM left for the arena and the model's own buffers: the RAM region less the
        stack and the firmware's fixed RAM."""
        return max(self.ram_size - self.stack - self.firmware_ram, 0)

    def pool_memories(self) -> tuple[PoolMemory, ...]:
        """The memories pool assignment may split the arena over (plan/pools): the writable,
        mapped internal RAMs at their full sizes; none on the host."""
        if self.host:
            return ()
        return tuple(
            PoolMemory(m.name, m.size, m.read_cycles_per_byte, m.write_cycles_per_byte)
            for m in self.memories
            if m.kind in POOL_KINDS and m.mapped and m.writable
        )

    def state_memory(self) -> TargetMemory | None:
        """The external RAM that may hold the model state: memory-mapped (the kernels work on
        the state in place) and writable, the largest such; None when there is none."""
        found = [m for m in self.memories if m.kind in SLOW_KINDS and m.mapped and m.writable]
        return max(found, key=lambda m: (m.size, m.name)) if found else None

    def paging_costs(
        self,
        pager: str,
        objective: str = "cycles",
        *,
        copies_only: bool = False,
        work: float | None = None,
    ) -> PagingCosts | None:
        """What paging costs here (plan/paging/target.py), None when it cannot page: the fast
        memory is the RAM region, costed as its first memory when the budget fits there (DTCM),
        else as the slowest internal memory in it; the slow memory is the largest external RAM
        (its own linker region), else (with a RAM budget only) an array in RAM costed as that
        slowest internal memory. The host pages with a RAM budget only, at nominal costs.
        `copies_only`: kernels never work on the slow memory, as if it were not mapped."""
        budget = self.ram_budget
        if self.host:
            if budget is None:
                return None
            rate, slow_rate = HOST_RATES
            nominal = SlowMemory("slow", None, False, slow_rate, slow_rate, not copies_only)
            return PagingCosts(nominal, rate, rate, pager, work, objective)
        end = self.ram_origin + self.ram_size
        inside = [
            m
            for m in self.memories
            if m.kind in POOL_KINDS and m.writable and self.ram_origin <= m.origin < end
        ]
        outside = [m for m in self.memories if m.kind in SLOW_KINDS and m.writable]
        if not inside or (not outside and budget is None):
            return None
        slowest = max(
            inside, key=lambda m: (m.read_cycles_per_byte + m.write_cycles_per_byte, m.name)
        )
        first = min(inside, key=lambda m: m.origin)  # where the arena starts: DTCM on an STM32F7
        arena = first if budget is not None and budget <= first.size else slowest
        if outside:
            ext = max(outside, key=lambda m: (m.size, m.name))
            slow = SlowMemory(
                ext.name,
                ext.size,
                True,
                ext.read_cycles_per_byte,
                ext.write_cycles_per_byte,
                ext.mapped and not copies_only,
                ext.energy_pj_per_byte,
            )
        else:
            slow = SlowMemory(
                f"{slowest.name} (stand-in)",
                None,
                False,
                slowest.read_cycles_per_byte,
                slowest.write_cycles_per_byte,
                not copies_only,
                slowest.energy_pj_per_byte,
            )
        return PagingCosts(
            slow,
            arena.read_cycles_per_byte,
            arena.write_cycles_per_byte,
            pager,
            work,
            objective,
            fast_energy=arena.energy_pj_per_byte,
            fast_name=arena.name,
            pj_per_cycle=self.pj_per_cycle,
        )


def memory_target(target: Target | None, ram_budget: int | None = None) -> MemoryTarget:
    """The one builder from a board (its build `target`: on the twin, the twin's origins and
    the real board's sizes), or from the host (`target` None or the host board)."""
    if target is None or target.board.is_host:
        return MemoryTarget("host", ram_budget=ram_budget, host=True)
    board = target.board
    energy = board.energy
    pj = None
    if energy is not None and board.clock_hz:
        pj = energy.run_watts(board.clock_hz) / board.clock_hz * 1e12
    return MemoryTarget(
        board.name,
        ram_size=target.ram.size,
        flash_size=target.flash.size,
        stack=board.stack_bytes,
        firmware_ram=target.port_board.firmware_ram,
        memories=tuple(
            TargetMemory(
                m.name,
                m.kind,
                m.origin,
                m.size,
                m.read_cycles_per_byte,
                m.write_cycles_per_byte or 0.0,
                m.mapped,
                m.writable,
                m.energy_pj_per_byte,
            )
            for m in target.memories
        ),
        ram_origin=target.ram.origin,
        pj_per_cycle=pj,
        ram_budget=ram_budget,
    )
