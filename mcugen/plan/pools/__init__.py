"""Pool assignment: a registry of pure functions `(PoolProblem, layout) -> PoolPlan`.

The stage after order, sharing and layout (plan/memory_plan.py): given the buffers with their
lifetimes, sizes and access counts, and the board's writable, mapped internal memories as plain
numbers, every buffer gets a pool (a memory) and an offset in it; each pool's layout is valid on
its own (the layout strategies of plan/layout, per pool), and the modelled cost of the accesses is
low. Strategies:
- `single`: today's one arena, in the board's RAM region as the linker places it (no pools);
- `fast_first`: one pool while the arena fits the fastest memory, else the hottest bytes per
  byte in the fastest memory and the rest in the next (fast_first.py);
- `auto` (default): `fast_first`'s split only when it takes no more RAM than the one arena.
Only static offsets get pools: the dynamic allocators move buffers within one arena.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from mcugen.plan.buffers import Buffer, align_up
from mcugen.plan.layout import LayoutResult
from mcugen.plan.pools.accesses import buffer_accesses
from mcugen.plan.pools.fast_first import fast_first, one_arena
from mcugen.plan.pools.problem import (
    Accesses,
    Pool,
    PoolMemory,
    PoolPlan,
    PoolProblem,
    PoolsDoNotFit,
    PoolsInvalid,
    check_layout,
)
from mcugen.registry import Registry

__all__ = [
    "DEFAULT",
    "POOLS",
    "Accesses",
    "Pool",
    "PoolMemory",
    "PoolPlan",
    "PoolProblem",
    "PoolStrategy",
    "PoolsDoNotFit",
    "PoolsInvalid",
    "buffer_accesses",
    "check_layout",
    "rank_memories",
]

Layout = Callable[[Sequence[Buffer]], LayoutResult]


class PoolStrategy(Protocol):
    def __call__(self, problem: PoolProblem, layout: Layout) -> PoolPlan: ...


POOLS: Registry[PoolStrategy] = Registry("pool strategy", default="auto")
DEFAULT = POOLS.default
POOLS.add("fast_first", fast_first)


@POOLS.register("auto")
def auto(problem: PoolProblem, layout: Layout) -> PoolPlan:
    """`fast_first`'s split when its pools together take no more bytes than the one arena, else
    the one arena (`single`) with the split it declined in the note: a modelled speed-up, which
    the twin cannot measure, never costs the user RAM. `--pools fast_first` takes the split
    whatever it costs."""
    found = fast_first(problem, layout)
    one = align_up(problem.arena)
    total = sum(p.size for p in found.pools)
    if not found.split:
        return replace(found, strategy="auto")
    if total <= one:
        return replace(found, strategy="auto")
    note = f"{found.note} declined: {total:,} bytes against {one:,} as one arena in the RAM region"
    return one_arena(problem, note, "auto")


@POOLS.register("single")
def single(problem: PoolProblem, layout: Layout) -> PoolPlan:
    """The one arena as before pools, costed at the slowest memory's rates: the linker places it
    in the board's RAM region, wherever .data and .bss leave it."""
    del layout
    return one_arena(problem, "one arena in the board's RAM region", "single")


def rank_memories(memories: Sequence[PoolMemory]) -> tuple[PoolMemory, ...]:
    """Fastest first (cycles to read and write a byte), then larger, then by name."""
    return tuple(sorted(memories, key=lambda m: (m.cost(1, 1), -m.size, m.name)))
