"""Weights staged from flash into free arena bytes before the operator that reads them.

On a Cortex-M4/M7 board the weights stay in flash, read through its wait states (NUCLEO-L4R5ZI:
5 at 120 MHz; NUCLEO-F767ZI: 7 at 216 MHz). A kernel that reads its weights many times per
inference (one pass per pair of output pixels in the matrix-product kernels) pays them on every
pass; a copy into SRAM pays them once. This places such copies where the plan leaves arena bytes
free: a staged copy for the operator at step k is a buffer live at step k only (the runtime copies
just before the operator runs, when step k - 1's dead buffers are already free), put in a gap
between the buffers live at step k, below the arena's end. The arena therefore never grows:
staging is free in RAM, and it is skipped where no gap holds the weights.

Steps: for each operator in the order whose weights are re-read at least `MIN_REREADS` times
(`WeightReads`, declared from the operator's kernel variant), first fit of the 16-byte aligned
copy among the gaps of the buffers live at its step, lowest offset first. Deterministic; O(ops x
buffers log buffers). Weaknesses: all or nothing per tensor (no partial copy of a large filter),
the copy is a CPU word copy (no DMA overlapped with the previous operator yet), and the gain is a
model: the twins (QEMU) have no wait states, so they measure the copy's instructions, never the
cycles it saves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mcugen.plan.buffers import ARENA_ALIGNMENT, Buffer, align_up

STAGE_CHOICES = ("off", "auto")

#: Per flash access of 8 bytes (64-bit reads), `reads` sweeps stall reads x W cycles; staged,
#: the copy's one sweep stalls W and costs its instructions (an LDM and STM of four words a
#: pass: 4 per 16 bytes on the twin, 2 per access). Copying can pay when (reads - 1) W > 2:
#: reads >= 3 for W >= 2 (both boards: 5 and 7 wait states). Caches and the flash accelerator
#: (ART) shrink the gain, never the copy: this is where it can pay at all, not a promise that it
#: does.
MIN_REREADS = 3


@dataclass(frozen=True)
class WeightReads:
    """An operator's constant weights as its kernel reads them: `reads` passes over `nbytes`."""

    op: int
    tensor: int
    nbytes: int
    reads: int


@dataclass(frozen=True)
class StagedWeights:
    """A copy of `tensor` at `offset` in the arena, live at `step` (operator `op`) only."""

    op: int
    tensor: int
    offset: int
    nbytes: int
    step: int
    reads: int

    @property
    def size(self) -> int:
        return align_up(self.nbytes)

    @property
    def flash_bytes_saved(self) -> int:
        """Flash bytes not read per inference: every pass but the copy's reads SRAM instead."""
        return self.nbytes * (self.reads - 1)


def free_gaps(
    buffers: Sequence[Buffer], offsets: Mapping[int, int], step: int, arena: int
) -> list[tuple[int, int]]:
    """(start, end) byte ranges of [0, arena) no buffer uses at `step`, lowest first."""
    busy = []
    for b in buffers:
        for first, last, size in b.segments():
            if first <= step <= last and size > 0:
                start = offsets[b.id]
                busy.append((start, start + size))
    gaps = []
    at = 0
    for start, end in sorted(busy):
        if start > at:
            gaps.append((at, start))
        at = max(at, end)
    if at < arena:
        gaps.append((at, arena))
    return gaps


def stage_weights(
    buffers: Sequence[Buffer],
    offsets: Mapping[int, int],
    order: Sequence[int],
    arena: int,
    reads: Iterable[WeightReads],
) -> tuple[StagedWeights, ...]:
    """The copies to make: for each operator re-reading its weights `MIN_REREADS` times or more,
    the lowest aligned gap at its step that holds them (none: not staged)."""
    step_of = {op: step for step, op in enumerate(order, start=1)}
    staged = []
    for w in sorted(reads, key=lambda w: (step_of.get(w.op, 0), w.tensor)):
        if w.reads < MIN_REREADS or w.nbytes <= 0 or w.op not in step_of:
            continue
        step = step_of[w.op]
        size = align_up(w.nbytes)
        for start, end in free_gaps(buffers, offsets, step, arena):
            at = align_up(start, ARENA_ALIGNMENT)
            if at + size <= end:
                staged.append(StagedWeights(w.op, w.tensor, at, w.nbytes, step, w.reads))
                break
    return tuple(staged)


def check_staged(
    staged: Sequence[StagedWeights],
    buffers: Sequence[Buffer],
    offsets: Mapping[int, int],
    arena: int,
) -> str:
    """Why `staged` is invalid ("" when it is not): a copy past the arena, misaligned, or over
    a buffer live at its step, or two copies at one step that overlap."""
    for s in staged:
        if s.offset < 0 or s.offset % ARENA_ALIGNMENT or s.offset + s.size > arena:
            return f"staged weights of operator {s.op} at {s.offset} leave the arena of {arena}"
        for b in buffers:
            for first, last, size in b.segments():
                off = offsets[b.id]
                if first <= s.step <= last and off < s.offset + s.size and s.offset < off + size:
                    return f"staged weights of operator {s.op} overlap buffer {b.id}"
        for t in staged:
            if t is not s and t.step == s.step and t.offset < s.offset + s.size:
                if s.offset < t.offset + t.size:
                    return f"staged weights of operators {s.op} and {t.op} overlap"
    return ""


@dataclass(frozen=True)
class FlashTiming:
    """The assumptions of the gain ESTIMATE: the twins (QEMU) have no wait states and no cache,
    so nothing here is measured. `wait_states` per flash access, `access_bytes` delivered per
    access (a sequential weight stream stalls once per access)."""

    board: str
    wait_states: int
    access_bytes: int
    source: str


def estimated_stall_cycles(staged: Iterable[StagedWeights], timing: FlashTiming) -> int:
    """ESTIMATE of the flash stall cycles staging removes per inference, net of the copy's own
    flash reads: per copy, `reads` sweeps no longer stall, the copy's one sweep does. The
    copy's instructions are not in it (the twin measures them). An upper bound: no cache."""
    total = 0
    for s in staged:
        accesses = -(-s.nbytes // timing.access_bytes)
        total += accesses * timing.wait_states * (s.reads - 1)
    return total
