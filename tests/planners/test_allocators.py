"""Dynamic allocators (compacting, planned): arena at the peak live bytes, legal moves, contents
preserved, outputs bit-exact with TFLM on the host."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.codegen.render import render_model
from mcugen.codegen.viewmodel import build_view_model
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate, plan_allocator, prepare
from mcugen.plan.buffers import Buffer
from mcugen.plan.dynamic import (
    COMPACTING,
    PLANNED,
    DynamicPlan,
    DynamicPlanInvalid,
    plan_dynamic,
)
from mcugen.plan.memory_plan import plan_memory
from support import MLPERF_INT8, SHARED_MODELS, assert_matches_tflm, random_dags, sweep
from testgraphs import benchmark_suite

SUITE = benchmark_suite(quick=False)
#: Every shared model mcugen builds (LSTM/SVDF/signal-op models and the hybrid KWS are not built).
REAL = (
    *MLPERF_INT8,
    "tflm_hello_world_int8", "tflm_hello_world_f32", "tflm_micro_speech_int8",
    "mcunet_vww_mixed", "st_miniresnetv2_aed_int8", "st_yamnet_aed_int8",
    "mlperf_vww_mbv1_f32", "mlperf_ic_resnet8_f32", "tflm_magic_wand_f32",
    "tflm_mobilenet_v2_int8", "deeplabv3_f32", "tflm_keyword_scrambled_int8",
    "tflm_micro_speech_lstm_int8", "tflm_mnist_lstm_int8", "tflm_mnist_lstm_f32", "tflm_dtln_int8",
)  # fmt: skip
#: Run only by benchmarks/sweeps.py: 20-90 s each per allocator on the host (their operators are
#: in the other models too).
HEAVY = {"deeplabv3_f32", "tflm_mobilenet_v2_int8", "mlperf_vww_mbv1_f32"}


def simulate_contents(plan: DynamicPlan) -> None:
    """Run the plan's moves on a byte array with memmove semantics; every live buffer keeps the
    pattern it was born with."""
    arena = bytearray(plan.arena_bytes)
    where: dict[int, int] = {}

    def born(b: int) -> None:
        where[b] = plan.birth_offsets[b]
        size = plan.buffers[b].size
        arena[where[b] : where[b] + size] = bytes((b * 7 + i) % 251 for i in range(size))

    def check() -> None:
        for b, off in where.items():
            size = plan.buffers[b].size
            assert arena[off : off + size] == bytes((b * 7 + i) % 251 for i in range(size))

    for b in plan.born(0):
        born(b)
    for step in range(1, plan.steps + 2):
        for b in plan.dies(step - 1):
            del where[b]
        for m in plan.moves[step]:
            size = plan.buffers[m.buffer].size
            src = where[m.buffer]
            arena[m.dst : m.dst + size] = bytes(arena[src : src + size])
            where[m.buffer] = m.dst
            check()
        if step <= plan.steps:
            for b in plan.born(step):
                born(b)
            check()


@st.composite
def random_buffers(draw: st.DrawFn) -> tuple[tuple[Buffer, ...], int]:
    steps = draw(st.integers(1, 12))
    count = draw(st.integers(1, 14))
    buffers = []
    for i in range(count):
        first = draw(st.integers(0, steps))
        last = draw(st.integers(first, steps))
        size = 16 * draw(st.integers(1, 8))
        buffers.append(Buffer(id=i, size=size, first=first, last=last))
    return tuple(buffers), steps


@pytest.mark.parametrize("mode", [COMPACTING, PLANNED])
@settings(max_examples=150, deadline=None)
@given(problem=random_buffers(), use_static=st.booleans())
def test_dynamic_plans_reach_the_peak_and_preserve_contents(mode, problem, use_static) -> None:
    buffers, steps = problem
    preferred = {b.id: 16 * ((b.id * 5) % 7) for b in buffers} if use_static else None
    ends = frozenset(b.id for b in buffers if b.last == steps)
    try:
        plan = plan_dynamic(mode, buffers, steps, preferred, ends)
    except DynamicPlanInvalid as e:  # known limit: an input that is live to the end must not move
        assert "initial offset" in str(e)
        assert any(b.first == 0 and b.last == steps for b in buffers)
        return
    plan.validate()
    assert plan.arena_bytes == plan.lower_bound
    simulate_contents(plan)
    assert plan == plan_dynamic(mode, buffers, steps, preferred, ends), "deterministic"


@settings(max_examples=40, deadline=None)
@given(graph=random_dags())
def test_random_graphs_plan_at_the_peak(graph: Graph) -> None:
    plan = plan_memory(graph)
    for mode in (COMPACTING, PLANNED):
        dyn = plan_dynamic(mode, plan.buffers, len(plan.order), plan.offsets)
        assert dyn.arena_bytes == plan.lower_bound <= plan.arena_bytes
        simulate_contents(dyn)


def test_planned_moves_less_than_compacting_on_the_suite() -> None:
    for name, build in SUITE:
        _, _, plan = prepare(build(), PlanOptions(allocator=PLANNED))
        c = plan_dynamic(COMPACTING, plan.buffers, len(plan.order))
        p = plan_dynamic(PLANNED, plan.buffers, len(plan.order), plan.offsets)
        assert c.arena_bytes == p.arena_bytes == plan.lower_bound, name
        assert p.moved_bytes <= c.moved_bytes, name


def planned_without_static_hint(graph: Graph) -> Generated:
    """The planned allocator from an empty start, so that it moves buffers (the static layout of
    these graphs already reaches the lower bound, and `planned` would then move nothing)."""
    g, lowered, plan = prepare(graph, PlanOptions(allocator=PLANNED))
    dyn = plan_allocator(plan, PLANNED, g.outputs)
    assert dyn is not None
    dyn = plan_dynamic(PLANNED, plan.buffers, len(plan.order), None, dyn.outputs)
    vm = build_view_model(g, plan, lowered, "model", dynamic=dyn)
    return Generated(g, plan, lowered, vm, render_model(vm), dynamic=dyn)


def _generators():
    return [
        pytest.param(lambda g, a=a: generate(g, options=PlanOptions(allocator=a)), id=a)
        for a in (COMPACTING, PLANNED)
    ] + [pytest.param(planned_without_static_hint, id="planned-moving")]


@pytest.mark.parametrize("generate_fn", _generators())
@pytest.mark.parametrize(("name", "build"), SUITE, ids=[n for n, _ in SUITE])
def test_generated_graphs_bit_exact(name: str, build, generate_fn) -> None:
    graph = build()
    gen = generate_fn(graph)
    assert gen.view_model.arena_bytes == gen.plan.lower_bound
    assert_matches_tflm(write_model(graph), samples=2, generate_fn=generate_fn)


@pytest.mark.skipif(not SHARED_MODELS.exists(), reason="../shared/models not present")
@pytest.mark.parametrize("generate_fn", _generators())
@pytest.mark.parametrize("name", sweep(REAL, lambda name: name not in HEAVY))
def test_real_models_bit_exact(name: str, generate_fn) -> None:
    model = (SHARED_MODELS / f"{name}.tflite").read_bytes()
    gen = generate_fn(import_model(model, source=name))
    assert gen.view_model.arena_bytes == gen.plan.lower_bound
    assert_matches_tflm(model, samples=2, generate_fn=generate_fn)


def test_cli_builds_each_allocator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcugen.cli import main

    model = tmp_path / "g.tflite"
    model.write_bytes(write_model(SUITE[0][1]()))
    for mode in ("static", COMPACTING, PLANNED):
        assert main(["run", str(model), "--allocator", mode, "--json"]) == 0
        out = capsys.readouterr().out
        assert f'"allocator": "{mode}"' in out
