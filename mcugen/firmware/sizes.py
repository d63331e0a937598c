"""Flash and RAM use of a firmware ELF, split into weights, code, arena and stack."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from mcugen.boards import Target
from mcugen.codegen.viewmodel import SLOW_SECTION  # paging's slots and the state in external RAM
from mcugen.errors import BuildError
from mcugen.plan.fit import slow_contents
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.ram_use import RamUse

FLASH_SECTIONS = (".isr_vector", ".text", ".rodata", ".ARM.exidx", ".data")
RAM_SECTIONS = (".data", ".bss", ".stack")
#: The arena's pools in their memories (templates/link.ld.j2), when the plan splits it.
POOL_SECTION_PREFIX = ".mcu_pool_"
#: The weights in external flash (templates/link.ld.j2), outside the internal flash's sections.
WEIGHTS_SECTION = ".mcu_weights"


@dataclass(frozen=True)
class FirmwareSizes:
    flash_bytes: int
    ram_bytes: int
    flash_limit: int
    ram_limit: int
    weights: int  # constant tensors (flash)
    code: int  # .text + vectors
    other_rodata: int  # tables, parameters, strings (flash)
    arena: int  # RAM
    stack: int  # RAM, reserved
    other_ram: int  # protocol buffers, runtime state
    pools: tuple[tuple[str, int], ...] = ()  # (memory, bytes of its pool section) when split
    external_weights: int = 0  # weights in external flash (section .mcu_weights), not in flash
    slow: int = 0  # the external RAM's section (.mcu_slow), not in RAM

    def rows(self) -> list[tuple[str, int, int, str]]:
        """(what, bytes, limit, memory) for a report."""
        return [
            ("weights", self.weights, self.flash_limit, "flash"),
            ("code", self.code, self.flash_limit, "flash"),
            ("tables and parameters", self.other_rodata, self.flash_limit, "flash"),
            ("arena", self.arena, self.ram_limit, "RAM"),
            ("stack (reserved)", self.stack, self.ram_limit, "RAM"),
            ("runtime state", self.other_ram, self.ram_limit, "RAM"),
        ]


def _tool(target: Target, name: str) -> str:
    cc = target.port_board.cc
    return cc[: -len("gcc")] + name if cc.endswith("gcc") else name


def _run(cmd: list[str]) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"{cmd[0]} failed: {proc.stderr.strip()[:200]}")
    return proc.stdout


def section_sizes(elf: Path, target: Target) -> dict[str, int]:
    sizes = {}
    for line in _run([_tool(target, "size"), "-A", str(elf)]).splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes


def symbol_sizes(elf: Path, target: Target) -> dict[str, int]:
    sizes = {}
    out = _run([_tool(target, "nm"), "-S", "--defined-only", str(elf)])
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            sizes[parts[3]] = int(parts[1], 16)
    return sizes


def firmware_sizes(elf: Path, target: Target) -> FirmwareSizes:
    sections = section_sizes(elf, target)
    symbols = symbol_sizes(elf, target)
    weights = sum(size for name, size in symbols.items() if name.startswith("g_const_"))
    external = sections.get(WEIGHTS_SECTION, 0)
    flash = sum(sections.get(s, 0) for s in FLASH_SECTIONS)
    pools = tuple(
        (name[len(POOL_SECTION_PREFIX) :], size)
        for name, size in sections.items()
        if name.startswith(POOL_SECTION_PREFIX)
    )
    ram = sum(sections.get(s, 0) for s in RAM_SECTIONS) + sum(size for _, size in pools)
    arena = symbols.get("mcu_arena", 0) + sum(
        size for name, size in symbols.items() if name.startswith("mcu_pool_")
    )
    stack = sections.get(".stack", 0)
    code = sections.get(".text", 0) + sections.get(".isr_vector", 0)
    return FirmwareSizes(
        flash_bytes=flash,
        ram_bytes=ram,
        flash_limit=target.flash.size,
        ram_limit=target.ram.size,
        weights=weights,
        code=code,
        other_rodata=flash - (0 if external else weights) - code,
        arena=arena,
        stack=stack,
        other_ram=ram - arena - stack,
        pools=pools,
        external_weights=external,
        slow=sections.get(SLOW_SECTION, 0),
    )


def linked_ram(sizes: FirmwareSizes, plan: MemoryPlan) -> RamUse:
    """The linked firmware's RAM in the vocabulary of the fit verdict (`plan.fit.RamUse`): the
    total is the ELF's; the model state and an in-RAM paging array are taken out of the
    runtime state by the plan's sizes of them (they are .bss arrays like the runtime's own)."""
    paging = plan.paging
    in_ram_slow = paging.slow_bytes if paging is not None and not paging.slow.external else 0
    model_state = plan.persistent.ram_bytes
    slow_memory = ""
    if sizes.slow:
        slow_memory = paging.slow.name if paging is not None else plan.persistent.memory
    return RamUse(
        arena=sizes.arena + in_ram_slow,
        model_state=model_state,
        runtime_state=sizes.other_ram - model_state - in_ram_slow,
        stack=sizes.stack,
        size=sizes.ram_limit,
        pools=sizes.pools if len(sizes.pools) > 1 else (),
        slow=sizes.slow,
        slow_memory=slow_memory,
        slow_holds=slow_contents(plan) if sizes.slow else "",
    )
