"""Layout strategies: validity on random buffer sets, optimality of CP-SAT against an exhaustive
search, the default chooser against the greedies, and the arena of each layout on real models."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.model.tflite_import import load_model
from mcugen.plan.buffers import (
    Buffer,
    activation_buffers,
    live_bytes_per_step,
)
from mcugen.plan.layout import LAYOUTS, cpsat, live_lower_bound
from mcugen.plan.layout.auto import choose_layout
from mcugen.plan.layout.cpsat import solve_cpsat
from mcugen.plan.layout.local_search import GREEDIES, best_greedy
from mcugen.plan.layout.placement import first_fit, order_of, place_in_order
from mcugen.plan.memory_plan import plan_memory
from support import SHARED_MODELS

#: Budget for the searching strategies in property tests: small, the answers stay deterministic.
QUICK = 0.05


@st.composite
def buffer_sets(
    draw: st.DrawFn,
    max_buffers: int = 14,
    max_size: int = 100_000,
    aligned: bool = True,
    profiles: bool = False,
) -> list[Buffer]:
    """Random lifetimes and sizes (0..max_size), with repeated sizes and lifetimes for ties.
    `aligned` rounds sizes up to 16 bytes, as `activation_buffers` does for every arena buffer.
    `profiles` gives some buffers two runs of different extents (a convolution in place growing
    or shrinking its input's buffer), as `activation_buffers(profiles=True)` does."""
    common_sizes = draw(st.lists(st.integers(0, max_size), min_size=1, max_size=3))
    buffers: list[Buffer] = []
    for i in range(draw(st.integers(0, max_buffers))):
        if buffers and draw(st.integers(0, 5)) == 0:  # an exact twin of an earlier buffer
            twin = draw(st.sampled_from(buffers))
            buffers.append(Buffer(i, twin.size, twin.first, twin.last, profile=twin.profile))
            continue
        first = draw(st.integers(0, 10))
        last = first + draw(st.integers(0, 5))
        size = draw(st.one_of(st.integers(0, max_size), st.sampled_from(common_sizes)))
        size = -(-size // 16) * 16 if aligned else size
        profile: tuple[tuple[int, int, int], ...] = ()
        if profiles and last > first and size > 16 and draw(st.booleans()):
            split = draw(st.integers(first + 1, last))
            other = draw(st.integers(1, size - 1))
            other = -(-other // 16) * 16 if aligned else other
            runs = [(first, split - 1, size), (split, last, other)]
            profile = tuple(
                runs if draw(st.booleans()) else [(first, split - 1, other), (split, last, size)]
            )
            if other == size:
                profile = ()
        buffers.append(Buffer(i, size, first, last, profile=profile))
    return buffers


def overlap(a: Buffer, b: Buffer, lo_a: int, lo_b: int) -> bool:
    """Whether two placed buffers share a byte at a step, run by run (independent of
    `Buffer.extent_during`)."""
    return any(
        fa <= lb and fb <= la and lo_a < lo_b + sb and lo_b < lo_a + sa
        for fa, la, sa in a.segments()
        for fb, lb, sb in b.segments()
        if sa and sb
    )


def arena(buffers: Sequence[Buffer], offsets: Mapping[int, int]) -> int:
    return max((offsets[b.id] + b.size for b in buffers), default=0)


def peak_live(buffers: Sequence[Buffer]) -> int:
    """The lower bound computed the slow way: step by step."""
    steps = max((b.last for b in buffers), default=0)
    return max(live_bytes_per_step(buffers, steps), default=0)


def assert_valid(buffers: Sequence[Buffer], offsets: Mapping[int, int]) -> None:
    """Every buffer placed, aligned, and no two sharing a step share a byte."""
    assert set(offsets) == {b.id for b in buffers}
    for b in buffers:
        assert offsets[b.id] >= 0 and offsets[b.id] % b.align == 0, (b, offsets[b.id])
    for i, a in enumerate(buffers):
        for b in buffers[i + 1 :]:
            lo_a, lo_b = offsets[a.id], offsets[b.id]
            assert not overlap(a, b, lo_a, lo_b), (a, b, lo_a, lo_b)


def stacked(buffers: Sequence[Buffer]) -> dict[int, int]:
    """Every buffer above the previous one: valid and poor, so that CP-SAT has to search."""
    offsets, top = {}, 0
    for b in buffers:
        offsets[b.id] = top
        top += -(-b.size // b.align) * b.align
    return offsets


def exhaustive_minimum(buffers: Sequence[Buffer], align: int = 16) -> int:
    """The smallest arena over every assignment of offsets on the alignment grid (branch and
    bound, independent of the planners): offsets range over 0, 16, ... below the best so far."""
    sized = sorted((b for b in buffers if b.size), key=lambda b: -b.size)
    best = sum(-(-b.size // align) * align for b in sized)
    chosen: dict[int, int] = {}

    def search(k: int, top: int) -> None:
        nonlocal best
        if k == len(sized):
            best = min(best, top)
            return
        b = sized[k]
        for offset in range(0, best - b.size, align):
            clash = any(overlap(o, b, chosen[o.id], offset) for o in sized[:k])
            if not clash:
                chosen[b.id] = offset
                search(k + 1, max(top, offset + b.size))
        chosen.pop(b.id, None)

    search(0, 0)
    return best


def assert_every_layout_valid(buffers: Sequence[Buffer]) -> None:
    """Every registered layout: valid, at or above the live bound (which equals the step-by-step
    peak), deterministic."""
    bound = live_lower_bound(buffers)
    assert bound == peak_live(buffers)
    for name, layout in LAYOUTS.items():
        offsets = layout(buffers, time_budget=QUICK).offsets
        assert_valid(buffers, offsets)
        assert arena(buffers, offsets) >= bound, name
        assert layout(buffers, time_budget=QUICK).offsets == offsets, f"{name} is not deterministic"


@settings(max_examples=120, deadline=None)
@given(buffer_sets())
def test_every_layout_is_valid_deterministic_and_above_the_bound(buffers: list[Buffer]) -> None:
    assert_every_layout_valid(buffers)


@settings(max_examples=120, deadline=None)
@given(buffer_sets(profiles=True))
def test_every_layout_packs_profiled_buffers(buffers: list[Buffer]) -> None:
    """Buffers whose extent changes over their lifetime: every layout valid run by run, above
    the live bound (which counts each run's extent), and no worse than treating them as flat."""
    flat = [Buffer(b.id, b.size, b.first, b.last) for b in buffers]
    assert live_lower_bound(buffers) <= live_lower_bound(flat)
    assert_every_layout_valid(buffers)


@settings(max_examples=60, deadline=None)
@given(buffer_sets(max_buffers=6, max_size=64, aligned=False, profiles=True))
def test_cpsat_equals_exhaustive_search_on_tiny_profiled_sets(buffers: list[Buffer]) -> None:
    result = solve_cpsat(buffers, time_budget=5.0, start=stacked(buffers))
    assert_valid(buffers, result.offsets)
    assert result.proven_optimal
    assert result.arena == result.lower_bound == exhaustive_minimum(buffers)


@settings(max_examples=60, deadline=None)
@given(buffer_sets(aligned=False))
def test_unaligned_sizes_still_give_aligned_offsets(buffers: list[Buffer]) -> None:
    for layout in LAYOUTS.values():
        offsets = layout(buffers, time_budget=QUICK).offsets
        assert_valid(buffers, offsets)
        assert arena(buffers, offsets) >= live_lower_bound(buffers)


def test_cpsat_bound_is_not_rounded_past_the_optimum() -> None:
    """Found by Hypothesis: CP-SAT reported the bound 51 as 51.00000000000001, which rounded up
    to a "lower bound" of 52 above the optimal 51-byte arena (26 bytes at 0, 19 at 32)."""
    sizes = (19, 26)
    buffers = [Buffer(id=k, size=s, first=0, last=0, align=16) for k, s in enumerate(sizes)]
    result = solve_cpsat(buffers, time_budget=5.0, start={0: 0, 1: 32})
    assert result.proven_optimal and result.arena == result.lower_bound == 51


@settings(max_examples=80, deadline=None)
@given(buffer_sets(max_buffers=6, max_size=64, aligned=False))
def test_cpsat_equals_exhaustive_search_on_tiny_sets(buffers: list[Buffer]) -> None:
    result = solve_cpsat(buffers, time_budget=5.0, start=stacked(buffers))
    assert_valid(buffers, result.offsets)
    assert result.proven_optimal
    assert result.arena == result.lower_bound == exhaustive_minimum(buffers)


def plain_cpsat_minimum(buffers: Sequence[Buffer], align: int = 16) -> int:
    """A second exact model, written without the planner's tricks (no grid coarser than the
    alignment, no cliques, no symmetry breaking, no two phases): NoOverlap2D of the
    (lifetime x bytes) rectangles."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    sized = [b for b in buffers if b.size]
    top = sum(-(-b.size // align) * align for b in sized)
    arena_var = model.new_int_var(0, top, "arena")
    times, spaces = [], []
    for b in sized:
        slot = model.new_int_var(0, top // align, f"slot{b.id}")
        offset = model.new_int_var(0, top, f"offset{b.id}")
        model.add(offset == align * slot)
        times.append(model.new_fixed_size_interval_var(b.first, b.last - b.first + 1, f"t{b.id}"))
        spaces.append(model.new_fixed_size_interval_var(offset, b.size, f"s{b.id}"))
        model.add(offset + b.size <= arena_var)
    model.add_no_overlap_2d(times, spaces)
    model.minimize(arena_var)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(model) == cp_model.OPTIMAL
    return int(solver.objective_value)


#: (first, last, size in 16-byte units): no layout reaches the live-bytes bound (12 units); the
#: best takes 13. Found by a random search over 500,000 instances (the only one it found);
#: a plain exhaustive search over offsets confirms 13 but takes about 40 s.
ABOVE_LIVE_BOUND = [
    (0, 0, 3),
    (0, 0, 4),
    (0, 3, 5),
    (1, 4, 1),
    (2, 2, 5),
    (3, 5, 1),
    (3, 6, 3),
    (4, 4, 2),
    (4, 5, 4),
    (5, 6, 4),
    (6, 6, 5),
]


def test_cpsat_proves_an_optimum_above_the_live_bound() -> None:
    buffers = [Buffer(i, 16 * n, a, z) for i, (a, z, n) in enumerate(ABOVE_LIVE_BOUND)]
    assert live_lower_bound(buffers) == 192
    result = solve_cpsat(buffers, time_budget=5.0)
    assert_valid(buffers, result.offsets)
    assert result.proven_optimal and result.arena == result.lower_bound == 208
    assert plain_cpsat_minimum(buffers) == 208
    chosen = choose_layout(buffers, time_budget=1.0)
    assert chosen.arena == 208 and chosen.proven_optimal
    for layout in LAYOUTS.values():
        assert arena(buffers, layout(buffers, time_budget=QUICK).offsets) >= 208


def test_a_search_the_wall_clock_stops_says_it_may_not_reproduce(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plans are reproducible because CP-SAT stops at a work limit; the wall-clock limit is only a
    safety net (it once stopped searches on a loaded CI machine, and a plan differed between two
    runs). When it does stop one, the layout and the plan say so."""
    buffers = [Buffer(i, 16 * n, a, z) for i, (a, z, n) in enumerate(ABOVE_LIVE_BOUND)]
    assert solve_cpsat(buffers, time_budget=1.0).note == ""
    assert choose_layout(buffers, time_budget=1.0).note == ""
    monkeypatch.setattr(cpsat, "SAFETY_FLOOR", 0.0)
    monkeypatch.setattr(cpsat, "SAFETY_FACTOR", 0.0)
    stopped = solve_cpsat(buffers, time_budget=1.0)
    assert stopped.note == cpsat.CLOCK_NOTE and not stopped.proven_optimal
    assert_valid(buffers, stopped.offsets)
    chosen = choose_layout(buffers, time_budget=1.0)
    assert chosen.note == cpsat.CLOCK_NOTE and not chosen.proven_optimal
    assert LAYOUTS["cpsat"](buffers, time_budget=1.0).note == cpsat.CLOCK_NOTE


@settings(max_examples=60, deadline=None)
@given(buffer_sets(max_buffers=12))
def test_cpsat_agrees_with_a_plain_exact_model(buffers: list[Buffer]) -> None:
    result = solve_cpsat(buffers, time_budget=5.0, start=stacked(buffers))
    assert result.proven_optimal
    assert result.arena == plain_cpsat_minimum(buffers)


@settings(max_examples=60, deadline=None)
@given(buffer_sets(max_buffers=25))
def test_cpsat_proves_optimality_on_small_sets(buffers: list[Buffer]) -> None:
    result = solve_cpsat(buffers, time_budget=5.0, start=stacked(buffers))
    assert_valid(buffers, result.offsets)
    assert result.proven_optimal and result.arena == result.lower_bound
    assert live_lower_bound(buffers) <= result.arena <= arena(buffers, best_greedy(buffers)[1])
    assert solve_cpsat(buffers, time_budget=5.0).arena == result.arena  # from the best greedy


@settings(max_examples=80, deadline=None)
@given(buffer_sets(max_buffers=20))
def test_auto_is_no_worse_than_any_greedy(buffers: list[Buffer]) -> None:
    chosen = choose_layout(buffers, time_budget=QUICK)
    assert_valid(buffers, chosen.offsets)
    assert chosen.arena == arena(buffers, chosen.offsets)
    for name, layout in GREEDIES.items():
        assert chosen.arena <= arena(buffers, layout(buffers)), name
    assert chosen.lower_bound >= live_lower_bound(buffers)
    assert chosen.proven_optimal == (chosen.arena <= chosen.lower_bound)
    searched = LAYOUTS["local_search"](buffers, time_budget=QUICK).offsets
    assert arena(buffers, searched) <= arena(buffers, best_greedy(buffers)[1])


@settings(max_examples=80, deadline=None)
@given(buffer_sets())
def test_first_fit_in_offset_order_never_raises_a_buffer(buffers: list[Buffer]) -> None:
    for layout in GREEDIES.values():
        offsets = layout(buffers)
        again = place_in_order(order_of(buffers, offsets), first_fit)
        assert all(again[b.id] <= offsets[b.id] for b in buffers)


def test_ties_and_empty_sets() -> None:
    assert LAYOUTS["auto"]([]).offsets == {}
    twins = [Buffer(i, 4096, 0, 3) for i in range(4)]
    for layout in LAYOUTS.values():
        offsets = layout(twins, time_budget=QUICK).offsets
        assert sorted(offsets.values()) == [0, 4096, 8192, 12288]


def test_greedy_by_size_ignores_the_budget() -> None:
    buffers = [Buffer(0, 32, 0, 1), Buffer(1, 48, 1, 2), Buffer(2, 16, 0, 2)]
    assert (
        LAYOUTS["greedy_by_size"](buffers).offsets
        == LAYOUTS["greedy_by_size"](buffers, time_budget=3.0).offsets
    )


# --- real models --------------------------------------------------------------------------------

needs_models = pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
MODELS = sorted(SHARED_MODELS.glob("*.tflite")) if SHARED_MODELS.is_dir() else []


def stored_buffers(path) -> tuple[Buffer, ...]:
    graph = load_model(path)
    return activation_buffers(graph, tuple(op.index for op in graph.operators))


@needs_models
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_every_layout_on_real_models(path) -> None:
    buffers = stored_buffers(path)
    bound = live_lower_bound(buffers)
    arenas = {}
    for name, layout in LAYOUTS.items():
        offsets = layout(buffers, time_budget=0.5).offsets
        assert_valid(buffers, offsets)
        arenas[name] = arena(buffers, offsets)
        assert arenas[name] >= bound
    assert arenas["auto"] <= min(arenas[name] for name in GREEDIES)
    assert arenas["local_search"] <= min(arenas[name] for name in GREEDIES)
    assert arenas["cpsat"] <= arenas["auto"] or arenas["auto"] == bound


@needs_models
def test_vww_reaches_its_live_lower_bound() -> None:
    path = SHARED_MODELS / "mlperf_vww_mbv1_int8.tflite"
    buffers = stored_buffers(path)
    assert live_lower_bound(buffers) == 55296
    assert arena(buffers, LAYOUTS["greedy_by_size"](buffers).offsets) == 73728  # TFLM's planner
    for name in ("auto", "local_search", "cpsat"):
        assert arena(buffers, LAYOUTS[name](buffers).offsets) == 55296, name
    chosen = choose_layout(buffers)
    assert chosen.proven_optimal and chosen.arena == 55296
    plan = plan_memory(load_model(path), layout="auto")
    plan.validate(load_model(path))
    assert plan.arena_bytes == plan.lower_bound == 55296
