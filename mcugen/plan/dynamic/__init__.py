"""Dynamic arena allocation: buffers move between operators so the arena is the peak live bytes.

Static offsets leave holes (fragmentation); moving live buffers between operators closes them.
Two allocators, chosen at build time (`--allocator`), both simulated here exactly as the runtime
(runtime_c/src/allocator.c) performs them, so the plan knows every offset and every moved byte:

- `compacting` (Liberis & Lane, "Neural networks on microcontrollers: saving memory at inference via
  operator reordering", 2019): an operator's new buffers go at the end of the live region; after it,
  the dead buffers are dropped and the live ones slide down, lowest address first.
- `planned`: new buffers go into existing holes when they fit (largest first, best fit); only when
  they do not, the cheapest partial compaction is chosen: slide the buffers above some point down,
  or those below some point up, whichever moves the fewest bytes.

Step convention (plan/buffers.py): step 0 is before the first operator, the operator at position p
runs at step p + 1. Moves of step s happen after the operator of step s - 1, once the buffers it
last used are freed; step `steps + 1` is after the last operator. Buffers born at step 0
(graph inputs) start packed from offset 0 (planned: at their static offsets); at the end of an
invoke they are back there, so the host writes inputs at fixed places and reads outputs where the
runtime's offset table says.
One module per moving allocator (compacting.py, planned.py); they register in `ALLOCATORS`.
Complexity: compacting O(steps x live); planned O(steps x live^2). Both reach the lower bound (the
peak live bytes of the order, scratch included) by construction. Weakness of `planned`: one step at
a time; it does not look ahead to place a buffer where it will not need to move later.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from mcugen.plan.buffers import Buffer, live_bytes_per_step
from mcugen.registry import Registry


class Allocator(StrEnum):
    """How the firmware places buffers: fixed offsets, or moved between operators."""

    STATIC = "static"
    COMPACTING = "compacting"
    PLANNED = "planned"
    #: Planned moves plus copies to and from a slow memory (plan/paging): chosen by paging, not
    #: by `--allocator`.
    PAGED = "paged"


STATIC, COMPACTING, PLANNED = Allocator.STATIC, Allocator.COMPACTING, Allocator.PLANNED
PAGED = Allocator.PAGED


class DynamicPlanInvalid(AssertionError):
    """A dynamic plan moves or places buffers illegally: a bug in mcugen, not a user error."""


@dataclass(frozen=True)
class Move:
    """`buffer` goes to `dst`; its bytes are copied there, or with `copy` False only its address
    changes (paging: a page dropped whose copy in slow memory is current)."""

    buffer: int
    dst: int
    copy: bool = True


@dataclass(frozen=True)
class DynamicPlan:
    mode: Allocator
    buffers: tuple[Buffer, ...]  # ids are 0..n-1, as activation_buffers numbers them
    steps: int  # number of operators
    birth_offsets: tuple[int, ...]  # per buffer id: offset when created (step 0: invoke start)
    moves: tuple[tuple[Move, ...], ...]  # per step 0..steps + 1, performed in order
    arena_bytes: int
    outputs: frozenset[int] = frozenset()  # buffers holding graph outputs (read after invoke)
    #: PAGED: bytes of slow memory; offsets from `arena_bytes` on address it (slot + arena_bytes)
    slow_bytes: int = 0

    @property
    def moved_bytes(self) -> int:
        """Bytes moved (PAGED: copied between fast and slow memory) per inference."""
        return sum(self.buffers[m.buffer].size for step in self.moves for m in step if m.copy)

    @property
    def lower_bound(self) -> int:
        return max(live_bytes_per_step(self.buffers, self.steps), default=0)

    def born(self, step: int) -> list[int]:
        return [b.id for b in self.buffers if b.first == step]

    def dies(self, step: int) -> list[int]:
        """Buffers freed after `step`: last used there (graph outputs never die)."""
        if step >= self.steps:
            return []
        return [b.id for b in self.buffers if b.last == step]

    def validate(self) -> None:
        """Raise `DynamicPlanInvalid` on overlap, a move over a live buffer, misalignment, an arena
        above the lower bound, or an input buffer holding an output that ends elsewhere than it
        started (the runtime puts inputs back at their initial offsets after an invoke)."""
        if self.mode != PAGED and self.arena_bytes != self.lower_bound:
            raise DynamicPlanInvalid(f"arena {self.arena_bytes} != lower bound {self.lower_bound}")
        offsets = {b: self.birth_offsets[b] for b in self.born(0)}
        self._check_live(offsets, 0)
        for step in range(1, self.steps + 2):
            for b in self.dies(step - 1):
                del offsets[b]
            for m in self.moves[step]:
                if m.buffer not in offsets:
                    raise DynamicPlanInvalid(f"step {step} moves dead buffer {m.buffer}")
                others = {b: o for b, o in offsets.items() if b != m.buffer}
                offsets[m.buffer] = m.dst
                self._check_live({**others, m.buffer: m.dst}, step)
            if step <= self.steps:
                for b in self.born(step):
                    offsets[b] = self.birth_offsets[b]
                self._check_live(offsets, step)
        for b in self.born(0):
            if b in self.outputs and offsets[b] != self.birth_offsets[b]:
                raise DynamicPlanInvalid(f"input buffer {b} ends away from its initial offset")

    def _check_live(self, offsets: dict[int, int], step: int) -> None:
        spans = sorted((o, o + self.buffers[b].size, b) for b, o in offsets.items())
        for (_, e0, b0), (s1, _, b1) in zip(spans, spans[1:], strict=False):
            if s1 < e0:
                raise DynamicPlanInvalid(f"step {step}: buffers {b0} and {b1} overlap")
        fast, top = self.arena_bytes, self.arena_bytes + self.slow_bytes
        for start, end, b in spans:
            straddles = start < fast < end
            if start < 0 or end > top or straddles or start % self.buffers[b].align:
                raise DynamicPlanInvalid(f"step {step}: buffer {b} at {start} is out of the arena")


def plan_dynamic(
    mode: Allocator | str,
    buffers: Sequence[Buffer],
    steps: int,
    preferred: Mapping[int, int] | None = None,
    outputs: frozenset[int] = frozenset(),
) -> DynamicPlan:
    """The `compacting` or `planned` allocation of `buffers` over `steps` operators, validated.

    `planned` places a buffer at its `preferred` offset (a static layout's) when that is free and
    inside the arena, so a static layout that reaches the lower bound moves nothing. `outputs`: the
    buffers that hold graph outputs."""
    step_moves_of = ALLOCATORS.get(mode)
    if step_moves_of is None:
        raise ValueError(f"allocator {mode!r} moves nothing: there is no dynamic plan")
    mode = Allocator(mode)
    # Buffers move whole: a profiled buffer (static offsets only) counts its full size throughout.
    bufs = tuple(replace(b, profile=()) for b in buffers)
    if [b.id for b in bufs] != list(range(len(bufs))):
        raise ValueError("buffer ids must be 0..n-1")
    arena = max(live_bytes_per_step(bufs, steps), default=0)
    births = [0] * len(bufs)
    moves: list[tuple[Move, ...]] = [()]
    offsets: dict[int, int] = {}
    for first in (x for x in bufs if x.first == 0):
        offsets[first.id] = births[first.id] = sum(bufs[x].size for x in offsets)
    if mode == PLANNED and preferred is not None:
        fitted = planned.fit_preferred(bufs, {}, list(offsets), arena, preferred)
        if fitted is not None:
            offsets = dict(fitted)
            for b, o in fitted.items():
                births[b] = o
    for step in range(1, steps + 2):
        for dead in bufs:
            if dead.last == step - 1 and step - 1 < steps:
                offsets.pop(dead.id, None)
        new = [b.id for b in bufs if b.first == step] if step <= steps else []
        step_moves = step_moves_of(bufs, offsets, new, arena, births, preferred or {})
        for m in step_moves:
            offsets[m.buffer] = m.dst
        for b in new:
            offsets[b] = births[b]
        moves.append(tuple(step_moves))
    plan = DynamicPlan(mode, bufs, steps, tuple(births), tuple(moves), arena, outputs)
    plan.validate()
    return plan


#: One step of a dynamic allocator: the moves before an operator, and the births of its new
#: buffers (written into `births`), given the live buffers' current offsets.
StepPolicy = Callable[
    [Sequence[Buffer], dict[int, int], list[int], int, list[int], Mapping[int, int]], list[Move]
]
#: Allocator modes by name; static offsets have no step policy (nothing moves). The moving
#: allocators register themselves from their own modules.
ALLOCATORS: Registry[StepPolicy | None] = Registry("allocator", default=Allocator.STATIC)
ALLOCATORS.add(Allocator.STATIC, None)
DEFAULT = Allocator(ALLOCATORS.default)

from mcugen.plan.dynamic import compacting, planned  # noqa: E402, F401
