"""Paging in the firmware (plan/paging/target.py, runtime_c/src/allocator.c with MCU_PAGED): the
schedule's moves keep every buffer's bytes, the host build of a paged plan is bit-exact with TFLM
at budgets down to a few hundred bytes with either pager, the reports carry the schedule, and the
user's mistakes get one line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcugen.cli import main
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate, prepare
from mcugen.plan.dynamic import PAGED, PLANNED, DynamicPlan
from mcugen.plan.memory_plan import plan_memory
from mcugen.plan.paging import CostModel, PagingError
from mcugen.plan.paging.target import PagingCosts, SlowMemory, paged_dynamic, plan_paging
from mcugen.plan.target import MemoryTarget, TargetMemory, memory_target
from support import EXAMPLE, SHARED_MODELS, assert_matches_tflm, random_dags
from testgraphs import benchmark_suite, nas_cells

SUITE = benchmark_suite(quick=True)


def paged(graph: Graph, budget: int, pager: str = "auto") -> Generated:
    options = PlanOptions(target=memory_target(None, budget), pager=pager)
    return generate(graph, options=options)


def simulate(dyn: DynamicPlan) -> None:
    """Run the moves on labelled bytes: every buffer still holds its own label when used, and a
    dropped page is only dropped when the slow slot holds its current label."""
    memory: dict[int, tuple[int, int]] = {}  # address -> (buffer, version)
    where: dict[int, int] = {}
    version: dict[int, int] = {}
    for step in range(dyn.steps + 1):
        for m in dyn.moves[step]:
            src, size = where[m.buffer], dyn.buffers[m.buffer].size
            if m.copy:
                for k in range(0, size, 16):
                    memory[m.dst + k] = memory[src + k]
            else:  # a drop: the destination already holds the current bytes
                assert all(
                    memory.get(m.dst + k) == (m.buffer, version[m.buffer])
                    for k in range(0, size, 16)
                ), (step, m)
            where[m.buffer] = m.dst
        for born in dyn.born(step):
            where[born] = dyn.birth_offsets[born]
        for b in dyn.buffers:
            if b.first <= step <= b.last and b.size:
                if b.first == step:  # written by its producer
                    version[b.id] = step
                    for k in range(0, b.size, 16):
                        memory[where[b.id] + k] = (b.id, step)
                held = {memory.get(where[b.id] + k) for k in range(0, b.size, 16)}
                assert held == {(b.id, version[b.id])}, (step, b.id, held)


@pytest.mark.parametrize(("name", "build"), SUITE, ids=[n for n, _ in SUITE])
@pytest.mark.parametrize("fraction", [2, 4])
def test_generated_graphs_paged_bit_exact(name: str, build, fraction: int) -> None:
    graph = build()
    budget = max(generate(graph).plan.arena_bytes // fraction // 16 * 16, 16)
    gen = paged(graph, budget)
    assert gen.dynamic is not None and gen.dynamic.mode == PAGED
    assert gen.view_model.arena_bytes <= budget
    simulate(gen.dynamic)
    assert_matches_tflm(write_model(graph), samples=2, generate_fn=lambda g: paged(g, budget))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=random_dags(), share=st.integers(1, 8), pager=st.sampled_from(["belady", "cpsat"]))
def test_random_graphs_paged_keep_every_buffer(graph: Graph, share: int, pager: str) -> None:
    """Any budget from 1/8 of the arena up: the moves keep every buffer's bytes (simulated)."""
    plan = plan_memory(graph, profiles=False)
    budget = max(plan.arena_bytes * share // 8 // 16 * 16, 16)
    target = memory_target(None, budget).paging_costs(pager)
    assert target is not None
    paging = plan_paging(graph, plan.order, plan.buffers, budget, target)
    simulate(paged_dynamic(paging, plan.buffers, len(plan.order)))


def test_a_budget_that_holds_the_layout_pages_nothing() -> None:
    """At the budget of the plan's own whole-buffer arena nothing is copied, whatever the
    pagers' greedy layouts find (nas_cells6_c16 in the optimal order: belady paged 6,144 bytes
    there before the plan's layout was tried first)."""
    graphs = [*SUITE, ("nas_cells6_c16", lambda: nas_cells(3, cells=6, channels=16, hw=8))]
    for name, make in graphs:
        graph = make()
        for order in ("optimal", "auto"):
            # paging runs the fastest kernels (no kernel choice under a budget yet)
            whole = prepare(graph, PlanOptions(order=order, allocator=PLANNED, kernels="opt"))[2]
            target = memory_target(None, whole.arena_bytes)
            options = PlanOptions(order=order, target=target, pager="belady", kernels="opt")
            gen = generate(graph, options=options)
            assert gen.plan.paging is not None, name
            schedule = gen.plan.paging.schedule
            assert schedule.cost == 0 and not schedule.copies, (name, order)


@pytest.mark.parametrize("pager", ["belady", "cpsat"])
def test_the_example_paged_through_a_few_hundred_bytes(pager: str) -> None:
    model = EXAMPLE.read_bytes()
    assert_matches_tflm(model, samples=3, generate_fn=lambda g: paged(g, 512, pager))


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="needs ../shared/models")
@pytest.mark.parametrize("stem", ["mlperf_ic_resnet8_int8", "mlperf_kws_dscnn_int8"])
def test_mlperf_models_paged_at_a_quarter_bit_exact(stem: str) -> None:
    model = (SHARED_MODELS / f"{stem}.tflite").read_bytes()
    budget = generate(load_model(SHARED_MODELS / f"{stem}.tflite")).plan.arena_bytes // 4
    result = assert_matches_tflm(model, samples=2, generate_fn=lambda g: paged(g, budget))
    assert result is not None


def test_copies_only_memory_too_small_fails_with_the_shortfall() -> None:
    """Slow memory that kernels may not work on: a budget below one operator's operands fails
    at plan time with the bytes missing."""
    graph = load_model(EXAMPLE)
    slow = SlowMemory("flash-like", None, False, 1.0, 1.0, mapped=False)
    assert PagingCosts(slow, 0.25, 0.25).cost_model() == CostModel(1.25, 1.25, None)
    # the same costs from a board: internal RAM at 0.25 cycles per byte, an external RAM at 1.0
    # that kernels may not work on
    ram = TargetMemory("ram", "SRAM", 0x2000_0000, 1 << 16, 0.25, 0.25)
    ext = TargetMemory("flash-like", "PSRAM", 0x9000_0000, 1 << 20, 1.0, 1.0, mapped=False)
    board = MemoryTarget("b", 1 << 16, 1 << 20, 0, 0, (ram, ext), 0x2000_0000, ram_budget=64)
    costs = PlanOptions(target=board).paging
    assert costs is not None and costs.cost_model() == CostModel(1.25, 1.25, None)
    with pytest.raises(PagingError, match=r"needs \d+ bytes of fast memory at once, \d+ more"):
        generate(graph, options=PlanOptions(target=board))


def test_energy_objective_uses_the_memories_energy_or_says_what_is_missing() -> None:
    graph = load_model(EXAMPLE)
    dtcm = TargetMemory("dtcm", "TCM", 0x2000_0000, 1 << 16, 0.5, 0.5, energy_pj_per_byte=5.0)
    sdram = TargetMemory("sdram", "SDRAM", 0xC000_0000, 1 << 23, 1.5, 1.0, energy_pj_per_byte=40.0)
    board = MemoryTarget("b", 1 << 16, 1 << 20, 0, 0, (dtcm, sdram), 0x2000_0000, ram_budget=512)
    options = PlanOptions(target=board, objective="energy")
    target = options.paging
    assert target is not None and target.fast_name == "dtcm" and target.slow.name == "sdram"
    assert target.cost_model() == CostModel(45.0, 45.0, 35.0) and target.unit == "pJ"
    gen = generate(graph, options=options)
    assert gen.plan.paging is not None and gen.plan.paging.unit == "pJ"
    unmeasured = replace(board, memories=(replace(dtcm, energy_pj_per_byte=None), sdram))
    missing = replace(options, target=unmeasured)
    with pytest.raises(PagingError, match="energy per byte of dtcm;"):
        generate(graph, options=missing)
    # with the board's energy per cycle (its [energy] model) a copy also costs the core's energy
    # over its cycles, and an unmeasured memory adds nothing: cycles (0.5 + 1.0) x 100 + 40
    per_cycle = replace(missing, target=replace(unmeasured, pj_per_cycle=100.0)).paging
    assert per_cycle is not None and per_cycle.cost_model() == CostModel(190.0, 240.0, 140.0)


def test_plan_reports_the_schedule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLE), "--ram-budget", "1024", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["paging"]
    assert report["fast_bytes"] <= 1024 < report["arena_all_fast"]
    assert report["bytes_in"] + report["bytes_out"] == sum(
        s["bytes_in"] + s["bytes_out"] for s in report["steps"]
    )
    assert report["lower_bound"] <= report["overhead"] and report["unit"] == "cycles"
    chart = tmp_path / "paged.svg"
    args = ["plan", str(EXAMPLE), "--ram-budget", "1024", "--no-strategies", "--chart", str(chart)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "paging (" in text and "modelled overhead" in text
    svg = chart.read_text()
    assert "fast memory offset" in svg and "paged in" in svg and "budget 1024 B" in svg


def test_paging_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert (
        main(["build", str(EXAMPLE), "--ram-budget", "1024", "--pager", "nope", "-o", str(out)])
        != 0
    )
    assert "unknown pager 'nope'" in capsys.readouterr().err
    args = ["build", str(EXAMPLE), "--ram-budget", "1024", "--allocator", "compacting"]
    assert main([*args, "-o", str(out)]) != 0
    assert "drop --allocator" in capsys.readouterr().err
    assert main(["plan", str(EXAMPLE), "--ram-budget", "1024", "--copies-only"]) != 0
    err = capsys.readouterr().err
    assert "needs 6176 bytes of fast memory at once, 5152 more than the 1024" in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):
        main(["plan", str(EXAMPLE), "--ram-budget", "8"])
    assert "--ram-budget" in capsys.readouterr().err
    assert not out.exists()
