"""Pool assignment (mcugen/plan/pools): valid per pool, deterministic, one pool when it fits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen import cli
from mcugen.errors import McugenError
from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate, prepare
from mcugen.plan import layout as layouts
from mcugen.plan import pools
from mcugen.plan.buffers import Buffer
from mcugen.plan.dynamic import Allocator
from mcugen.plan.pools import Accesses, PoolMemory, PoolPlan, PoolProblem
from mcugen.plan.target import MemoryTarget
from support import EXAMPLE, assert_matches_tflm, pool_target
from testgraphs import benchmark_suite

F767 = (
    PoolMemory("dtcm", 131072, 0.25, 0.25),
    PoolMemory("sram1", 376832, 0.5, 0.5),
    PoolMemory("sram2", 16384, 0.5, 0.5),
)


def small_fast(fast: int) -> MemoryTarget:
    """The F767's memories with a DTCM of `fast` bytes: forces a split of small models."""
    return pool_target((replace(F767[0], size=fast), *F767[1:]), stack=8192, firmware_ram=1184)


def independent_check(problem: PoolProblem, plan: PoolPlan) -> None:
    """Every buffer in exactly one pool, pinned ones in the first; per pool and per step, the
    bytes each live buffer uses (its profile) are disjoint and inside the memory, checked byte
    range by byte range after sorting (not the planner's pairwise test)."""
    homes = [k for b in problem.buffers for k, p in enumerate(plan.pools) if b.id in p.offsets]
    assert len(homes) == len(problem.buffers), "a buffer is in no pool or in two"
    assert all(plan.pool_of[b] == 0 for b in problem.pinned)
    by_id = {b.id: b for b in problem.buffers}
    steps = max((b.last for b in problem.buffers), default=0) + 1
    for pool in plan.pools:
        assert pool.size <= pool.memory.size
        for step in range(steps):
            spans = []
            for b_id, off in pool.offsets.items():
                b = by_id[b_id]
                assert off % b.align == 0 and off + b.size <= pool.size
                used = max((n for f, t, n in b.segments() if f <= step <= t), default=0)
                if used:
                    spans.append((off, off + used))
            spans.sort()
            for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
                assert start >= end, f"pool {pool.name} step {step}: bytes overlap"


GRAPHS = [("example", lambda: load_model(EXAMPLE)), *benchmark_suite(quick=True)]


@pytest.mark.parametrize("name", [n for n, _ in GRAPHS])
def test_split_plans_are_valid_and_deterministic(name: str) -> None:
    make = dict(GRAPHS)[name]
    whole = prepare(make(), PlanOptions())[2]
    fast = max(256, whole.arena_bytes // 3 // 16 * 16)
    options = PlanOptions(pools="fast_first", target=small_fast(fast))
    g, _, plan = prepare(make(), options)
    again = prepare(make(), options)[2]
    assert plan.pools is not None and plan.pools.split, plan.pools_error
    assert plan.pools == again.pools  # same pools, offsets and costs on every run
    first = plan.pools.pools[0]
    assert first.name == "dtcm" and first.size <= fast
    ranked = pools.rank_memories(small_fast(fast).pool_memories())
    reserved = plan.pools.pools[1].memory.reserved
    assert reserved > 8192 and plan.pools.pools[1].memory.size == ranked[1].size - reserved
    problem = PoolProblem(
        plan.buffers,
        plan.offsets,
        pools.buffer_accesses(g, plan.order, plan.buffers),
        tuple(p.memory for p in plan.pools.pools),
        frozenset(b.id for b in plan.buffers if b.scratch_of >= 0),
    )
    independent_check(problem, plan.pools)
    assert plan.pools.fastest_cost <= plan.pools.cost <= plan.pools.slowest_cost


def test_one_pool_when_the_arena_fits_the_fastest_memory() -> None:
    plain = generate(load_model(EXAMPLE))
    pooled = generate(load_model(EXAMPLE), options=PlanOptions(target=small_fast(131072)))
    assert pooled.plan.pools is not None and not pooled.plan.pools.split
    assert pooled.plan.pools.pools[0].offsets == dict(pooled.plan.offsets)
    assert pooled.files == plain.files  # the firmware is today's, byte for byte
    # no memories (the host), or a dynamic allocator: no pools at all
    assert plain.plan.pools is None
    dyn = generate(
        load_model(EXAMPLE),
        options=PlanOptions(allocator=Allocator.COMPACTING, target=small_fast(512)),
    )
    assert dyn.plan.pools is None and not dyn.view_model.pools


def test_single_keeps_one_arena_and_unknown_names_are_one_line_errors() -> None:
    single = generate(
        load_model(EXAMPLE), options=PlanOptions(pools="single", target=small_fast(512))
    )
    assert single.plan.pools is not None and not single.plan.pools.split
    with pytest.raises(McugenError, match="unknown pool strategy 'fastest'; choose one of"):
        PlanOptions(pools="fastest")


def test_a_model_that_fits_no_arrangement_says_by_how_many_bytes() -> None:
    tiny = pool_target((replace(F767[0], size=1024), replace(F767[1], size=4096)), 0, 0)
    plan = prepare(load_model(EXAMPLE), PlanOptions(target=tiny))[2]
    assert plan.pools is None
    assert "fit no arrangement of the memories (dtcm 1024, sram1 " in plan.pools_error
    assert "short by at least" in plan.pools_error or "found no room" in plan.pools_error
    # kernel scratch goes to the fastest memory: the depthwise kernel's 608 bytes of int16
    # planes and band-line table do not fit 512
    tinier = pool_target((replace(F767[0], size=512), replace(F767[1], size=4096)), 0, 0)
    plan = prepare(load_model(EXAMPLE), PlanOptions(target=tinier, kernels="opt"))[2]
    assert plan.pools is None
    assert "scratch buffer 17 (608 bytes) does not fit dtcm (512 bytes)" in plan.pools_error


def test_hot_small_buffers_go_to_the_fastest_memory() -> None:
    """Three buffers live together; the fast memory holds one: the densest (accesses per byte)."""
    buffers = (Buffer(0, 64, 0, 2), Buffer(1, 64, 0, 2), Buffer(2, 32, 0, 2))
    accesses = {0: Accesses(64, 64), 1: Accesses(640, 64), 2: Accesses(32, 32)}
    memories = (PoolMemory("fast", 64, 0.25, 0.25), PoolMemory("slow", 1024, 1.0, 1.0))
    problem = PoolProblem(buffers, {0: 0, 1: 64, 2: 128}, accesses, memories)
    plan = pools.POOLS.get("fast_first")(problem, _greedy)
    assert dict(plan.pools[0].offsets) == {1: 0}
    independent_check(problem, plan)
    assert plan.cost == 704 * 0.25 + (128 + 64) * 1.0


def _greedy(buffers: Sequence[Buffer]) -> layouts.LayoutResult:
    return layouts.get_layout("greedy_by_size")(buffers)


@st.composite
def pool_problems(draw: st.DrawFn) -> PoolProblem:
    n = draw(st.integers(1, 9))
    buffers = []
    for i in range(n):
        first = draw(st.integers(0, 6))
        buffers.append(
            Buffer(i, 16 * draw(st.integers(1, 8)), first, first + draw(st.integers(0, 3)))
        )
    offsets = _greedy(buffers).offsets
    accesses = {
        b.id: Accesses(draw(st.integers(0, 999)), draw(st.integers(0, 999))) for b in buffers
    }
    fast = 16 * draw(st.integers(1, 12))
    memories = (PoolMemory("fast", fast, 0.25, 0.25), PoolMemory("slow", 4096, 0.5, 0.75))
    pinned = frozenset(b.id for b in buffers[:1] if b.size <= fast and draw(st.booleans()))
    return PoolProblem(tuple(buffers), offsets, accesses, memories, pinned)


@settings(max_examples=150, deadline=None)
@given(pool_problems())
def test_random_assignments_are_valid(problem: PoolProblem) -> None:
    plan = pools.POOLS.get("fast_first")(problem, _greedy)
    independent_check(problem, plan)
    assert plan == pools.POOLS.get("fast_first")(problem, _greedy)
    assert plan.lower_bound <= plan.cost <= plan.slowest_cost
    if problem.arena <= problem.memories[0].size:
        assert not plan.split and dict(plan.pools[0].offsets) == dict(problem.offsets)


def test_the_example_split_over_two_pools_runs_bit_exact_on_the_host() -> None:
    """The generated C with pool arrays (here in host sections) matches TFLM."""
    options = PlanOptions(pools="fast_first", target=small_fast(4096))
    gen = generate(load_model(EXAMPLE), options=options)
    assert gen.plan.pools is not None and gen.plan.pools.split
    assert len(gen.view_model.pools) == 2
    assert_matches_tflm(EXAMPLE.read_bytes(), generate_fn=lambda g: generate(g, options=options))


@pytest.mark.parametrize("command", ["plan", "build"])
def test_every_board_command_takes_pools_and_refuses_unknown_names(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, str(EXAMPLE), "--board", "nucleo-f767", "--pools", "fastest"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown pool strategy 'fastest'; choose one of" in err


@pytest.mark.parametrize("name", [n for n, _ in GRAPHS])
def test_auto_takes_a_split_only_when_it_costs_no_ram(name: str) -> None:
    """The default keeps `fast_first`'s split when its pools together are no larger than the one
    arena, and otherwise plans the one arena and names the split it declined (issue 31)."""
    make = dict(GRAPHS)[name]
    whole = prepare(make(), PlanOptions())[2]
    fast = max(256, whole.arena_bytes // 3 // 16 * 16)
    split = prepare(make(), PlanOptions(pools="fast_first", target=small_fast(fast)))[2]
    auto = prepare(make(), PlanOptions(target=small_fast(fast)))[2]
    assert split.pools is not None and split.pools.split and auto.pools is not None
    total = sum(p.size for p in split.pools.pools)
    one = -(-whole.arena_bytes // 16) * 16
    assert auto.pools.strategy == "auto"
    if total <= one:
        assert auto.pools.pools == split.pools.pools
    else:
        assert not auto.pools.split and auto.pools.pools[0].size == one
        assert f"declined: {total:,} bytes against {one:,} as one arena" in auto.pools.note
