"""Check a paging schedule against its problem by simulating where each buffer's data is.

Written apart from `schedule.schedule_of` (which derives copies from a timeline) so that a bug in
one is caught by the other. Rules, each raising `ScheduleInvalid`:
1. every buffer has episodes covering exactly its lifetime, in order, none empty;
2. fast episodes lie inside [0, capacity) on the alignment; slow ones at the buffer's slow slot;
3. at every step, the fast-memory byte ranges of the buffers there do not overlap;
4. a buffer used at a step is in fast memory unless kernels may work in slow memory;
5. slow slots are aligned, inside `slow_bytes`, apart for buffers alive at the same time;
6. every copy is of a live buffer at a boundary inside its lifetime, of its size, between its
   episode offsets, and carries data that exists: a copy in reads a slow copy that was written (by
   a copy out, or by an operator in slow memory) and is current; a copy out a current fast copy;
7. at every step the buffer's location holds its current data (no buffer reappears in fast memory
   without a copy in);
8. the cost equals the copies plus the slow accesses, and the lower bound does not exceed it.
Complexity O(steps x live buffers log live buffers + copies).
"""

from __future__ import annotations

from collections import defaultdict

from mcugen.plan.paging.problem import PagedBuffer, PagingProblem
from mcugen.plan.paging.schedule import SLOW, Copy, Direction, Memory, Schedule, ScheduleInvalid


def validate(problem: PagingProblem, schedule: Schedule) -> None:
    """Raise `ScheduleInvalid` on any violation of the rules above."""
    places = _places(problem, schedule)
    _check_fast_overlap(problem, places)
    _check_slow_slots(problem, schedule)
    copies: dict[tuple[int, int], list[Copy]] = defaultdict(list)
    for c in schedule.copies:
        copies[(c.buffer, c.step)].append(c)
    known = problem.by_id()
    for key in copies:
        b = known.get(key[0])
        if b is None or not b.first < key[1] <= b.last:
            raise ScheduleInvalid(f"copy of buffer {key[0]} before step {key[1]}: not alive then")
    cost = sum(_simulate(problem, b, places[b.id], schedule, copies) for b in problem.buffers)
    if cost != schedule.cost:
        raise ScheduleInvalid(f"cost {schedule.cost} differs from the recomputed {cost}")
    if schedule.lower_bound > schedule.cost:
        raise ScheduleInvalid(f"lower bound {schedule.lower_bound} above cost {schedule.cost}")
    if schedule.proven_optimal and schedule.lower_bound != schedule.cost:
        raise ScheduleInvalid("proven optimal, but the lower bound is below the cost")


def _places(problem: PagingProblem, schedule: Schedule) -> dict[int, list[int]]:
    """Rules 1, 2 and 4: buffer id -> location at each step of its lifetime."""
    known = problem.by_id()
    places: dict[int, list[int]] = {b: [] for b in known}
    for e in schedule.episodes:
        b = known.get(e.buffer)
        if b is None:
            raise ScheduleInvalid(f"episode of unknown buffer {e.buffer}")
        if e.first != b.first + len(places[b.id]) or e.last < e.first or e.last > b.last:
            raise ScheduleInvalid(f"buffer {b.id}: episode {e.first}..{e.last} out of sequence")
        if e.memory == Memory.FAST:
            if e.offset < 0 or e.offset % problem.align or e.offset + b.size > problem.capacity:
                raise ScheduleInvalid(f"buffer {b.id} at fast offset {e.offset} is out of range")
            where = e.offset
        elif e.memory == Memory.SLOW and schedule.slow_offsets.get(b.id) == e.offset:
            where = SLOW
        else:
            raise ScheduleInvalid(f"buffer {b.id}: slow episode away from its slow slot")
        places[b.id] += [where] * (e.last - e.first + 1)
    for b in problem.buffers:
        if len(places[b.id]) != b.last - b.first + 1:
            raise ScheduleInvalid(f"buffer {b.id}: episodes do not cover its lifetime")
        for s in b.uses:
            if places[b.id][s - b.first] == SLOW and problem.must_be_fast(b, s):
                raise ScheduleInvalid(f"buffer {b.id} is used at step {s} but not in fast memory")
    return places


def _check_fast_overlap(problem: PagingProblem, places: dict[int, list[int]]) -> None:
    """Rule 3."""
    by_step: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for b in problem.buffers:
        for s in range(b.first, b.last + 1):
            where = places[b.id][s - b.first]
            if where != SLOW:
                by_step[s].append((where, where + b.size, b.id))
    for s, spans in by_step.items():
        spans.sort()
        for (_, end, low), (start, _, high) in zip(spans, spans[1:], strict=False):
            if start < end:
                raise ScheduleInvalid(f"step {s}: buffers {low} and {high} overlap in fast memory")


def _check_slow_slots(problem: PagingProblem, schedule: Schedule) -> None:
    """Rule 5."""
    slotted = [b for b in problem.buffers if b.id in schedule.slow_offsets]
    for b in slotted:
        at = schedule.slow_offsets[b.id]
        if at < 0 or at % problem.align or at + b.size > schedule.slow_bytes:
            raise ScheduleInvalid(f"buffer {b.id}: slow slot {at} out of range")
    for i, a in enumerate(slotted):
        for b in slotted[i + 1 :]:
            x, y = schedule.slow_offsets[a.id], schedule.slow_offsets[b.id]
            if a.first <= b.last and b.first <= a.last and x < y + b.size and y < x + a.size:
                raise ScheduleInvalid(f"buffers {a.id} and {b.id} overlap in slow memory")


def _simulate(
    problem: PagingProblem,
    b: PagedBuffer,
    places: list[int],
    schedule: Schedule,
    copies: dict[tuple[int, int], list[Copy]],
) -> int:
    """Rules 6 and 7 for one buffer; returns its cost in millicycles."""
    cost = problem.cost
    total = 0
    fast_ok = slow_ok = False  # the fast / slow copy holds the buffer's current data
    for s in range(b.first, b.last + 1):
        where = places[s - b.first]
        prev = places[s - b.first - 1] if s > b.first else None
        moved_in = False
        at_boundary = sorted(copies.get((b.id, s), []), key=lambda c: c.direction != "out")
        for c in at_boundary:
            if c.bytes != b.size or c.slow_offset != schedule.slow_offsets.get(b.id):
                raise ScheduleInvalid(f"copy of buffer {b.id} before step {s}: wrong size or slot")
            if c.direction == Direction.OUT:
                if prev is None or prev == SLOW or c.fast_offset != prev or not fast_ok:
                    raise ScheduleInvalid(f"copy out of buffer {b.id} before step {s}: no data")
                slow_ok = True
                total += b.size * cost.out_per_byte
            else:
                if where == SLOW or c.fast_offset != where or not slow_ok:
                    raise ScheduleInvalid(f"copy in of buffer {b.id} before step {s}: no data")
                moved_in = True
                total += b.size * cost.in_per_byte
        if s == b.first:
            fast_ok, slow_ok = where != SLOW, where == SLOW
        elif where != SLOW:
            fast_ok = moved_in or (fast_ok and where == prev)
        else:
            fast_ok = False  # its fast bytes are free for others from this step
        if not (fast_ok if where != SLOW else slow_ok):
            raise ScheduleInvalid(f"buffer {b.id} lost its data at step {s}")
        if s in b.writes:
            fast_ok, slow_ok = where != SLOW, where == SLOW
        if where == SLOW and s in b.uses:
            total += b.size * (cost.slow_per_byte or 0)
    return total
