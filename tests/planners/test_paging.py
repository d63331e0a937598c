"""Paging schedules (mcugen/plan/paging): every pager is valid and above the lower bound, the exact
one matches a brute force written here, `validate` catches each kind of broken schedule, plans
are deterministic, an impossible budget names its shortfall, and real models page."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan.dynamic import PLANNED
from mcugen.plan.paging import (
    PAGERS,
    SLOW,
    Copy,
    CostModel,
    Direction,
    Episode,
    Memory,
    PagedBuffer,
    PagingError,
    PagingProblem,
    Schedule,
    ScheduleInvalid,
    exact,
    get_pager,
    paging_lower_bound,
    paging_problem,
    use_steps,
    validate,
)
from support import EXAMPLE, SHARED_MODELS

GRID = 16

# --- Brute force: a dynamic program over steps, written from the rules, not from the planners ---

#: Per live buffer at a step: (location, fast copy newer than slow); location SLOW or an offset.
State = tuple[tuple[int, int, bool], ...]


def placements(problem: PagingProblem, step: int) -> Iterator[dict[int, int]]:
    """Every location of the buffers alive at `step` (fast offsets on the grid), no overlap."""
    alive = [b for b in problem.buffers if b.first <= step <= b.last]
    options = []
    for b in alive:
        fast = list(range(0, problem.capacity - b.size + 1, GRID))
        options.append(fast if problem.must_be_fast(b, step) else [SLOW, *fast])
    for choice in itertools.product(*options):
        spans = sorted((o, o + b.size) for o, b in zip(choice, alive, strict=True) if o != SLOW)
        if all(e <= s for (_, e), (s, _) in zip(spans, spans[1:], strict=False)):
            yield {b.id: o for o, b in zip(choice, alive, strict=True)}


def brute_force(problem: PagingProblem) -> int | None:
    """The least cost in millicycles over every schedule, None when none exists."""
    cost = problem.cost
    states: dict[State, int] = {(): 0}
    for step in range(problem.steps + 1):
        nxt: dict[State, int] = {}
        for prev, spent in states.items():
            before = {b: (where, dirty) for b, where, dirty in prev}
            for where in placements(problem, step):
                total, state = spent, []
                for b_id, at in sorted(where.items()):
                    b = problem.index[b_id]
                    was, dirty = before.get(b_id, (None, False))
                    if was is not None and was != SLOW and at != was and dirty:
                        total += b.size * cost.out_per_byte
                    if was is not None and at != SLOW and at != was:
                        total += b.size * cost.in_per_byte
                    dirty = dirty and at == was
                    if step in b.writes:
                        dirty = at != SLOW
                    if at == SLOW and step in b.uses:
                        total += b.size * (cost.slow_per_byte or 0)
                    state.append((b_id, at, dirty))
                key = tuple(state)
                if total < nxt.get(key, total + 1):
                    nxt[key] = total
        states = nxt
    return min(states.values(), default=None)


@st.composite
def problems(draw: st.DrawFn) -> PagingProblem:
    steps = draw(st.integers(1, 5))
    buffers = []
    for k in range(draw(st.integers(1, 5))):
        first = draw(st.integers(0, steps))
        last = draw(st.integers(first, steps))
        inner = draw(st.sets(st.integers(first, last))) if last > first + 1 else set()
        uses = tuple(sorted({first, last} | inner))
        writes = tuple(sorted({first} | draw(st.sets(st.sampled_from(uses), max_size=1))))
        buffers.append(PagedBuffer(k, GRID * draw(st.integers(1, 3)), first, last, uses, writes))
    slow = draw(st.sampled_from([None, None, 0.5, 1.0, 4.0]))
    costs = CostModel(
        draw(st.sampled_from([0.5, 1.0, 2.0])), draw(st.sampled_from([1.0, 3.0])), slow
    )
    capacity = GRID * draw(st.integers(1, 4)) + draw(st.sampled_from([0, 0, 8]))
    return PagingProblem(tuple(buffers), steps, capacity, costs)


@settings(max_examples=150, deadline=None)
@given(problems())
def test_the_exact_pager_matches_brute_force_and_the_others_are_valid_and_bounded(
    problem: PagingProblem,
) -> None:
    best = brute_force(problem)
    if best is None:
        for name in PAGERS:
            with pytest.raises(PagingError, match="more than the"):
                get_pager(name)(problem)
        return
    assert paging_lower_bound(problem) <= best
    exact = get_pager("cpsat")(problem, budget=5.0)
    validate(problem, exact)
    assert exact.cost == best and exact.proven_optimal and exact.lower_bound == best
    for name in PAGERS:
        found = get_pager(name)(problem)
        validate(problem, found)
        assert found.lower_bound <= best <= found.cost


@settings(max_examples=60, deadline=None)
@given(problems())
def test_windows_alone_are_valid_between_the_optimum_and_the_heuristic(
    problem: PagingProblem,
) -> None:
    """The neighbourhood search by windows (exact.py step 2) on 2-step windows, the whole model
    never solved: every window's answer merged into the schedule must stay valid."""
    best = brute_force(problem)
    if best is None or best == 0:
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exact, "WINDOW", 2)
        patch.setattr(exact, "FULL_CELLS", 0)
        found = get_pager("cpsat")(problem, budget=2.0)
    validate(problem, found)
    assert best <= found.cost <= get_pager("belady")(problem).cost


# --- validate() rejects each kind of broken schedule ------------------------------------------


def paged_case() -> tuple[PagingProblem, Schedule]:
    """Buffer 0 is written at 0, read at 1 and 4; 1 and 2 crowd it out at steps 2 and 3."""
    problem = PagingProblem(
        (
            PagedBuffer(0, 32, 0, 4, (0, 1, 4), (0,)),
            PagedBuffer(1, 32, 1, 2, (1, 2), (1,)),
            PagedBuffer(2, 32, 2, 3, (2, 3), (2,)),
            PagedBuffer(3, 16, 3, 4, (3, 4), (3,)),
        ),
        4,
        64,
        CostModel(1.0, 2.0, None),
    )
    schedule = get_pager("belady")(problem)
    schedule.validate(problem)
    assert schedule.bytes_out == 32 and schedule.bytes_in == 32
    return problem, schedule


def with_episode(schedule: Schedule, index: int, **changes: object) -> Schedule:
    episodes = list(schedule.episodes)
    episodes[index] = replace(episodes[index], **changes)  # type: ignore[arg-type]
    return replace(schedule, episodes=tuple(episodes))


def episode_index(schedule: Schedule, buffer: int, memory: Memory) -> int:
    return next(
        k for k, e in enumerate(schedule.episodes) if e.buffer == buffer and e.memory == memory
    )


def test_validate_rejects_each_broken_rule() -> None:
    problem, good = paged_case()
    fast_of_1 = episode_index(good, 1, Memory.FAST)
    slow_of_0 = episode_index(good, 0, Memory.SLOW)
    out = next(c for c in good.copies if c.direction == Direction.OUT)
    copy_in = next(c for c in good.copies if c.direction == Direction.IN)
    other = good.episodes[episode_index(good, 2, Memory.FAST)].offset
    broken = {
        "overlap in fast memory": with_episode(good, fast_of_1, offset=other),
        "out of range": with_episode(good, fast_of_1, offset=problem.capacity - 16),
        "out of range ": with_episode(good, fast_of_1, offset=8),
        "used at step 4 but not in fast": replace(
            good,
            episodes=(*good.episodes[:slow_of_0], replace(good.episodes[slow_of_0], last=4))
            + good.episodes[slow_of_0 + 2 :],
        ),
        "buffer 0 lost its data at step 2": replace(
            good, copies=tuple(c for c in good.copies if c != out)
        ),
        "copy in of buffer 1 before step 2: no data": replace(
            good,
            slow_offsets=MappingProxyType({**good.slow_offsets, 1: 32}),
            slow_bytes=64,
            copies=(
                *good.copies,
                Copy(2, Direction.IN, 1, 32, good.episodes[fast_of_1].offset, 32),
            ),
        ),
        "not alive then": replace(good, copies=(*good.copies, replace(copy_in, buffer=1))),
        "cost": replace(good, cost=good.cost + 1),
        "lower bound": replace(good, lower_bound=good.cost + 1),
        "do not cover": replace(good, episodes=good.episodes[:-1]),
        "slow slot": replace(good, slow_offsets=MappingProxyType({0: 16}), slow_bytes=32),
        "lost its data": replace(
            good,
            copies=tuple(c for c in good.copies if c != copy_in),
            cost=good.cost - 32 * problem.cost.in_per_byte,
        ),
        "wrong size": replace(
            good, copies=tuple(replace(c, bytes=16) if c == out else c for c in good.copies)
        ),
    }
    for message, schedule in broken.items():
        with pytest.raises(ScheduleInvalid, match=message.strip()):
            validate(problem, schedule)


def test_validate_rejects_a_slow_memory_overlap_and_a_copy_from_nowhere() -> None:
    problem = PagingProblem(
        (PagedBuffer(0, 16, 0, 2, (0, 2), (0,)), PagedBuffer(1, 16, 0, 2, (0, 2), (0,))),
        2,
        16,
        CostModel(1.0, 1.0, 1.0),
    )
    schedule = get_pager("cpsat")(problem)
    validate(problem, schedule)
    slow = [e for e in schedule.episodes if e.memory == Memory.SLOW]
    assert slow, "16 bytes of fast memory cannot hold both buffers"
    _, paged = paged_case()
    shared = MappingProxyType({**paged.slow_offsets, 1: paged.slow_offsets[0]})
    with pytest.raises(ScheduleInvalid, match="buffers 0 and 1 overlap in slow memory"):
        validate(paged_case()[0], replace(paged, slow_offsets=shared))
    fake = Copy(1, Direction.IN, 0, 16, 0, schedule.slow_offsets.get(0, 0))
    with pytest.raises(ScheduleInvalid):
        validate(problem, replace(schedule, copies=(*schedule.copies, fake)))
    never = Episode(0, 0, 2, Memory.FAST, 0)
    with pytest.raises(ScheduleInvalid):
        validate(problem, replace(schedule, episodes=(never, *schedule.episodes)))


# --- Determinism, impossible budgets, the registry ----------------------------------------------


@pytest.mark.parametrize("name", list(PAGERS))
def test_the_same_problem_gives_the_same_schedule(name: str) -> None:
    problem, _ = paged_case()
    first, second = get_pager(name)(problem), get_pager(name)(problem)
    assert first == second and repr(first) == repr(second)


def test_an_impossible_budget_names_the_shortfall() -> None:
    problem, _ = paged_case()
    tight = replace(problem, capacity=48)
    for name in PAGERS:
        with pytest.raises(PagingError, match="step 1 needs 64 bytes .* 16 more than the 48"):
            get_pager(name)(tight)


def test_an_unknown_pager_is_one_line_with_the_names() -> None:
    with pytest.raises(Exception, match="unknown pager 'x'; choose one of: auto, belady, cpsat"):
        get_pager("x")


# --- Use steps from a graph ----------------------------------------------------------------------


def test_use_steps_follow_every_member_of_a_shared_buffer() -> None:
    """On the example planned with sharing: each buffer is used at first and last, written at
    first, and used (written) wherever an operator reads (writes) one of its member tensors."""
    graph, _, plan = prepare(load_model(EXAMPLE), PlanOptions(allocator=PLANNED))
    found = use_steps(graph, plan.order, plan.buffers)
    assert any(len(b.tensor_placements()) > 1 for b in plan.buffers), "no shared buffer"
    step_of = {op: k for k, op in enumerate(plan.order, start=1)}
    for b in plan.buffers:
        uses, writes = found[b.id]
        assert uses[0] == b.first and uses[-1] == b.last and b.first in writes
        for t, _ in b.tensor_placements():
            for op in graph.operators:
                if t in op.inputs:
                    assert step_of[op.index] in uses
                if t in op.outputs:
                    assert step_of[op.index] in writes
        if b.scratch_of >= 0:
            assert uses == writes == (step_of[b.scratch_of],)


# --- Real models --------------------------------------------------------------------------------


#: Copies at a cycle per byte each way; kernels in slow memory (memory-mapped SDRAM) 4 per byte.
COPIES_ONLY = CostModel(1.0, 1.0)
MAPPED = CostModel(1.0, 1.0, 4.0)


def real_case(path: object, fraction: int, cost: CostModel) -> PagingProblem:
    graph, _, plan = prepare(load_model(path), PlanOptions(allocator=PLANNED))  # type: ignore[arg-type]
    capacity = plan.arena_bytes // fraction // GRID * GRID
    return paging_problem(graph, plan.order, plan.buffers, capacity, cost)


REAL = [pytest.param(EXAMPLE, 2, id="example-1/2")] + [
    pytest.param(SHARED_MODELS / "mlperf_ic_resnet8_int8.tflite", k, id=f"resnet8-1/{k}")
    for k in (2, 4)
]


@pytest.mark.parametrize(("path", "fraction"), REAL)
def test_real_models_page_validly_above_the_lower_bound(path: object, fraction: int) -> None:
    if not SHARED_MODELS.is_dir() and path != EXAMPLE:
        pytest.skip("../shared/models not present")
    copies_only = real_case(path, fraction, COPIES_ONLY)
    try:
        schedules = [(get_pager(name)(copies_only, budget=0.2), copies_only) for name in PAGERS]
    except PagingError as e:  # one operator's inputs and outputs exceed the budget
        assert f"more than the {copies_only.capacity} available" in str(e)
        schedules = []
    mapped = replace(copies_only, cost=MAPPED)
    schedules += [(get_pager(name)(mapped, budget=0.2), mapped) for name in PAGERS]
    for schedule, problem in schedules:
        validate(problem, schedule)
        assert schedule.lower_bound <= schedule.cost
        print(
            f"{schedule.strategy} {path} at {problem.capacity} B, slow access "
            f"{problem.cost.slow_access}: {schedule.cycles:.0f} cycles, bound "
            f"{schedule.lower_bound / 1000:.0f}, {schedule.bytes_in} B in, "
            f"{schedule.bytes_out} B out {schedule.note}"
        )


def test_optimal_is_claimed_only_when_the_bound_is_met() -> None:
    """The example at 1/2 of its arena, kernels allowed in slow memory: the heuristic leaves a gap
    to the lower bound and says it is not optimal; CP-SAT closes it and says it is."""
    problem = real_case(EXAMPLE, 2, MAPPED)
    heuristic = get_pager("belady")(problem, budget=0.2)
    exact = get_pager("cpsat")(problem, budget=0.2)
    assert not heuristic.proven_optimal and heuristic.lower_bound < heuristic.cost
    assert exact.proven_optimal and exact.lower_bound == exact.cost < heuristic.cost
