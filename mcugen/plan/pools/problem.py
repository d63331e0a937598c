"""What pool assignment plans and what it returns, as plain data.

A board offers several memories of different speed (`PoolMemory`: a name, the bytes buffers may
use there, cycles per byte read and written); the arena's buffers, with their lifetimes and the
bytes their operators read and write (`Accesses`), are assigned one memory each (a pool) and an
offset in it. Each pool's layout must be valid on its own and within its memory. The modelled cost
of an assignment is the cycles of every buffer access at its memory's rates.

Nothing here knows boards, firmware or files: the caller passes numbers (the memories of a
`MemoryTarget`, plan/target.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from mcugen.errors import BuildError
from mcugen.plan.buffers import Buffer


class PoolsInvalid(AssertionError):
    """A pool planner produced an inconsistent assignment: a bug in mcugen, not a user error."""


class PoolsDoNotFit(BuildError):
    """No arrangement the planner found holds the buffers in the memories: a user error with the
    shortfall in bytes."""


@dataclass(frozen=True)
class PoolMemory:
    """One memory buffers may go in: `size` is what the buffers may use (the memory less what else
    the firmware puts there, `reserved`), costs are cycles per byte streamed."""

    name: str
    size: int
    read_cycles_per_byte: float
    write_cycles_per_byte: float
    reserved: int = 0  # bytes of the memory the firmware's own data and stack take

    def cost(self, reads: int, writes: int) -> float:
        return reads * self.read_cycles_per_byte + writes * self.write_cycles_per_byte


@dataclass(frozen=True)
class Accesses:
    """Bytes read and written in one inference by a buffer's producer and consumers."""

    reads: int
    writes: int

    @property
    def total(self) -> int:
        return self.reads + self.writes


@dataclass(frozen=True)
class PoolProblem:
    """The buffers of one plan with their single-arena layout (`offsets`), their accesses, the
    memories fastest first, and the buffers that must stay in the first pool (`pinned`: kernel
    scratch, which the runtime addresses from the first pool's base)."""

    buffers: tuple[Buffer, ...]
    offsets: Mapping[int, int]
    accesses: Mapping[int, Accesses]
    memories: tuple[PoolMemory, ...]
    pinned: frozenset[int] = frozenset()

    @property
    def arena(self) -> int:
        return max((self.offsets[b.id] + b.size for b in self.buffers), default=0)

    def cost_in(self, memory: PoolMemory, buffer_ids: Sequence[int]) -> float:
        return sum(memory.cost(self.accesses[i].reads, self.accesses[i].writes) for i in buffer_ids)


@dataclass(frozen=True)
class Pool:
    """One pool: its memory, and its buffers' offsets from the pool's start."""

    memory: PoolMemory
    offsets: Mapping[int, int]  # buffer id -> offset in this pool
    size: int  # extent of the layout, a multiple of 16

    @property
    def name(self) -> str:
        return self.memory.name


@dataclass(frozen=True)
class PoolPlan:
    """Every buffer's pool and offset, and the modelled access cost against two references: all
    buffers in the fastest memory (a bound: no assignment costs less) and all in the slowest."""

    strategy: str
    pools: tuple[Pool, ...]  # the first is the arena the runtime gets (ctx->arena)
    cost: float
    fastest_cost: float
    slowest_cost: float
    note: str = ""
    pool_of: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def split(self) -> bool:
        return len(self.pools) > 1

    @property
    def lower_bound(self) -> float:
        return self.fastest_cost

    @classmethod
    def of(
        cls, strategy: str, problem: PoolProblem, pools: Sequence[Pool], note: str = ""
    ) -> PoolPlan:
        """The plan of `pools` for `problem`, costs computed, validated."""
        # Empty pools go, but the first and the one the firmware's own RAM shares stay.
        used = tuple(p for k, p in enumerate(pools) if k == 0 or p.offsets or p.memory.reserved)
        pool_of = {b: k for k, p in enumerate(used) for b in p.offsets}
        ids = [b.id for b in problem.buffers]
        slowest = max(problem.memories, key=lambda m: (m.cost(1, 1), m.name))
        plan = cls(
            strategy,
            used,
            cost=sum(problem.cost_in(p.memory, list(p.offsets)) for p in used),
            fastest_cost=problem.cost_in(problem.memories[0], ids),
            slowest_cost=problem.cost_in(slowest, ids),
            note=note,
            pool_of=MappingProxyType(pool_of),
        )
        plan.validate(problem)
        return plan

    def validate(self, problem: PoolProblem) -> None:
        """Raise `PoolsInvalid` unless every buffer is in exactly one pool, the pinned ones in the
        first, and each pool's layout is aligned, overlap-free and within its memory."""
        seen: dict[int, int] = {}
        for k, pool in enumerate(self.pools):
            for b in pool.offsets:
                if b in seen:
                    raise PoolsInvalid(f"buffer {b} is in pools {seen[b]} and {k}")
                seen[b] = k
        if set(seen) != {b.id for b in problem.buffers}:
            raise PoolsInvalid("some buffers have no pool, or unknown buffers have one")
        if any(seen[b] != 0 for b in problem.pinned):
            raise PoolsInvalid("a pinned buffer is outside the first pool")
        by_id = {b.id: b for b in problem.buffers}
        for pool in self.pools:
            members = [by_id[b] for b in pool.offsets]
            check_layout(members, pool.offsets, pool.size)
            if pool.size > pool.memory.size:
                raise PoolsInvalid(f"pool {pool.name}: {pool.size} bytes in {pool.memory.size}")


def check_layout(buffers: Sequence[Buffer], offsets: Mapping[int, int], size: int) -> None:
    """Each buffer aligned, inside `size` bytes, and apart from every buffer it shares a step
    with (pairwise, O(n^2): an independent check of the layouts the pools reuse)."""
    for b in buffers:
        off = offsets[b.id]
        if off < 0 or off % b.align or off + b.size > size:
            raise PoolsInvalid(f"buffer {b.id} at {off} (size {b.size}) outside {size} bytes")
    for i, a in enumerate(buffers):
        for b in buffers[i + 1 :]:
            need_a, need_b = a.extent_during(b), b.extent_during(a)
            if need_a and need_b:
                lo_a, lo_b = offsets[a.id], offsets[b.id]
                if lo_a < lo_b + need_b and lo_b < lo_a + need_a:
                    raise PoolsInvalid(f"buffers {a.id} and {b.id} overlap in one pool")
