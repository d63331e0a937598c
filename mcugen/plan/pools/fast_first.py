"""Pool assignment, greedy by access density: the hottest bytes in the fastest memory.

Steps:
1. When the single-arena layout fits the fastest memory, keep it: one pool, nothing changes.
2. Rank the buffers: pinned ones first (kernel scratch stays in the first pool), then by accesses
   per byte (bytes read and written per inference over the buffer's size), highest first; ties by
   smaller size, then id.
3. Fill the memories fastest first. For each buffer in rank order: skip it if the bytes live at
   one of its steps would exceed the memory (a necessary condition, O(steps)); else place it by
   first fit among the buffers already there; if that overflows, lay the pool out again with the
   best of the fast greedies (at most `RELAYOUTS` times per memory: a budget counted in work, so
   plans are identical on any machine). What fits stays; the rest goes on to the next memory.
4. Lay each pool out again with the chosen layout strategy, kept when smaller.
Each pool is laid out on its own, so a split can take more RAM than the one arena (ST's YAMNet
on disco-f746ng: DTCM 49,440 + SRAM1 98,304 against 98,784): the default, `auto`, keeps it only
when it does not.
Complexity O(n (steps + n log n)) plus the bounded re-layouts. Weaknesses: greedy, so a dense
large buffer can take the fast memory from several smaller ones worth more in total (a knapsack
the greedy solves only approximately); accesses are a traffic estimate (accesses.py). The
assignment's lower bound is the cost with every buffer in the fastest memory. Density-ordered
filling is Dantzig's greedy for the knapsack (1957); placing each buffer in the first memory of a
ranked list that holds it is what TVM USMP's greedy algorithms do with their candidate pools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcugen.plan.buffers import Buffer, align_up
from mcugen.plan.layout import LayoutResult
from mcugen.plan.layout.local_search import best_greedy
from mcugen.plan.layout.placement import arena_of, first_fit, forbidden, live_lower_bound
from mcugen.plan.pools.problem import Pool, PoolMemory, PoolPlan, PoolProblem, PoolsDoNotFit

#: Re-layouts of a memory's buffers tried when first fit overflows, per memory.
RELAYOUTS = 24

Layout = Callable[[Sequence[Buffer]], LayoutResult]


def fast_first(problem: PoolProblem, layout: Layout) -> PoolPlan:
    """Assign `problem`'s buffers to its memories, hottest per byte fastest (module docstring)."""
    first = problem.memories[0]
    if problem.arena <= first.size:
        whole = Pool(first, dict(problem.offsets), align_up(problem.arena))
        return PoolPlan.of("fast_first", problem, [whole], f"the arena fits {first.name}")
    ranked = sorted(problem.buffers, key=lambda b: _rank(problem, b))
    pools: list[Pool] = []
    for k, memory in enumerate(problem.memories):
        pinned = problem.pinned if k == 0 else frozenset()
        offsets = _fill(memory, ranked, pinned)
        ranked = [b for b in ranked if b.id not in offsets]
        pools.append(Pool(memory, offsets, align_up(arena_of(_members(problem, offsets), offsets))))
        if not ranked:
            break
    if ranked:
        raise _no_room(problem, ranked)
    pools = [_relaid(problem, pool, layout) for pool in pools]
    split = ", ".join(f"{p.name} {len(p.offsets)} buffers {p.size} bytes" for p in pools)
    return PoolPlan.of("fast_first", problem, pools, f"split: {split}")


def one_arena(problem: PoolProblem, note: str, strategy: str = "fast_first") -> PoolPlan:
    """The single arena in the board's RAM region, costed at the slowest memory's rates (the
    linker places it wherever .data and .bss leave it), with why."""
    slowest = max(problem.memories, key=lambda m: (m.cost(1, 1), m.name))
    memory = PoolMemory("ram", align_up(problem.arena), *_rates(slowest))
    whole = Pool(memory, dict(problem.offsets), align_up(problem.arena))
    return PoolPlan.of(strategy, problem, [whole], note)


def _rates(memory: PoolMemory) -> tuple[float, float]:
    return memory.read_cycles_per_byte, memory.write_cycles_per_byte


def _rank(problem: PoolProblem, b: Buffer) -> tuple[bool, float, int, int]:
    density = problem.accesses[b.id].total / b.size if b.size else float("inf")
    return (b.id not in problem.pinned, -density, b.size, b.id)


def _members(problem: PoolProblem, offsets: dict[int, int]) -> list[Buffer]:
    return [b for b in problem.buffers if b.id in offsets]


def _fill(memory: PoolMemory, ranked: Sequence[Buffer], pinned: frozenset[int]) -> dict[int, int]:
    """Offsets of the buffers of `ranked` that fit `memory`, taken in rank order (step 3); a
    pinned buffer that does not fit raises `PoolsDoNotFit`."""
    steps = max((b.last for b in ranked), default=0) + 2
    live = [0] * steps
    placed: list[Buffer] = []
    offsets: dict[int, int] = {}
    relayouts = RELAYOUTS
    for b in ranked:
        found = None
        segments = b.segments()
        if all(live[s] + n <= memory.size for f, t, n in segments for s in range(f, t + 1)):
            near = [(c, offsets[c.id]) for c in placed if c.overlaps_in_time(b)]
            at = first_fit(b, forbidden(b, near))
            if at + b.size <= memory.size:
                found = {**offsets, b.id: at}
            elif relayouts > 0:
                relayouts -= 1
                _, trial = best_greedy([*placed, b])
                found = trial if arena_of([*placed, b], trial) <= memory.size else None
        if found is None:
            if b.id in pinned:
                raise PoolsDoNotFit(
                    f"kernel scratch buffer {b.id} ({b.size} bytes) does not fit {memory.name} "
                    f"({memory.size} bytes) beside the other scratch buffers",
                    hint="scratch stays in the fastest memory; try a smaller model",
                )
            continue
        offsets = found
        placed.append(b)
        for first, last, size in segments:
            for s in range(first, last + 1):
                live[s] += size
    return offsets


def _relaid(problem: PoolProblem, pool: Pool, layout: Layout) -> Pool:
    """`pool` laid out again by the chosen strategy, when that is smaller (step 4)."""
    members = _members(problem, dict(pool.offsets))
    if not members:
        return pool
    found = layout(members)
    if found.arena >= pool.size:
        return pool
    return Pool(pool.memory, dict(found.offsets), align_up(found.arena))


def _no_room(problem: PoolProblem, left: Sequence[Buffer]) -> PoolsDoNotFit:
    """The one-line error: by how many bytes the memories are short when the live bytes say so
    (no arrangement can fit), else how much the greedy found no room for."""
    names = ", ".join(f"{m.name} {m.size}" for m in problem.memories)
    short = live_lower_bound(problem.buffers) - sum(m.size for m in problem.memories)
    detail = (
        f"short by at least {short} bytes"
        if short > 0
        else f"{len(left)} buffers ({live_lower_bound(left)} bytes live at once) found no room"
    )
    return PoolsDoNotFit(
        f"the arena's buffers fit no arrangement of the memories ({names} bytes free): {detail}",
        hint="try a smaller model or input resolution",
    )
