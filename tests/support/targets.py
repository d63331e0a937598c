"""Memory targets built by hand for the pool, paging and patch tests."""

from __future__ import annotations

from collections.abc import Sequence

from mcugen.plan.pools import PoolMemory
from mcugen.plan.target import MemoryTarget, TargetMemory


def pool_target(
    memories: Sequence[PoolMemory], stack: int = 0, firmware_ram: int = 0
) -> MemoryTarget:
    """A target of internal memories only, no RAM total (a library built for its memories):
    what pool assignment sees; patch stages are then tried when the pools do not fit."""
    return MemoryTarget(
        "test",
        stack=stack,
        firmware_ram=firmware_ram,
        memories=tuple(
            TargetMemory(m.name, "SRAM", 0, m.size, m.read_cycles_per_byte, m.write_cycles_per_byte)
            for m in memories
        ),
    )


def resized(target: MemoryTarget, name: str, size: int) -> MemoryTarget:
    """`target` with its memory `name` shrunk (or grown) to `size` bytes."""
    found = [m.name for m in target.memories]
    assert name in found, f"{name} not in {found}"
    memories = tuple(
        TargetMemory(**{**m.__dict__, "size": size}) if m.name == name else m
        for m in target.memories
    )
    return MemoryTarget(**{**target.__dict__, "memories": memories})
