"""Training schedules (mcugen/train/schedule/) of real training graphs: a training graph becomes a
problem whose forward operators are not recomputed after their weights' update, `mcugen train
--ram-budget` recomputes to meet the budget and trains bit for bit as store-all does; the Pareto
curve, solves cut short, ruin and recreate, the gap and size limits, the energy objective."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mcugen.train.schedule as schedule_package
from mcugen.cli import main
from mcugen.model.tflite_write import write_model
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from mcugen.train.schedule import (
    SCHEDULERS,
    Budgets,
    Schedule,
    simulate,
    validate,
)
from mcugen.train.schedule.baselines import greedy, ruin_and_recreate
from mcugen.train.schedule.training import (
    EnergyPrices,
    PageCosts,
    estimated_cycles,
    training_problem,
    updated_variables,
)
from support import conv_chain

# --- a training graph scheduled and run ---------------------------------------------------------


def test_a_training_graph_becomes_a_problem_with_update_barriers() -> None:
    tg = build_training_graph(conv_chain(), TrainOptions(trainable="all"))
    graph = tg.graph
    problem = training_problem(graph, estimated_cycles(graph))
    inputs = len(graph.inputs)
    assert len(problem.nodes) == inputs + len(graph.operators)
    assert not any(node.recomputable for node in problem.nodes[:inputs])
    for op in graph.operators:
        node = problem.nodes[inputs + op.index]
        assert node.recomputable == (not updated_variables(op)), op.label
        weights = [t for t in op.inputs if t >= 0 and graph.tensors[t].is_variable]
        if node.recomputable and weights:  # a forward operator: not after its update
            writer = next(o for o in graph.operators if set(weights) & set(updated_variables(o)))
            assert node.recompute_until == inputs + writer.index


def test_recomputation_trains_bit_for_bit_as_store_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mcugen train --ram-budget` on the host: the schedule recomputes, the arena meets the
    budget, the tuned model equals store-all's byte for byte; at half that, the pager runs
    kernels on the slow memory, bit for bit too; with copies only, that budget is one error line
    and no output."""
    model = tmp_path / "chain.tflite"
    model.write_bytes(write_model(conv_chain()))
    rng = np.random.default_rng(4)
    data = tmp_path / "d.npz"
    np.savez(data, x=rng.normal(0, 1, (4, 12, 12, 4)).astype(np.float32), y=np.arange(4) % 5)
    argv = ["train", str(model), "--board", "host", "--data", str(data), "--trainable", "all"]
    argv += ["--epochs", "2", "--json"]
    assert main([*argv, "-o", str(tmp_path / "plain.tflite")]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["schedule"] is None
    budget = plain["arena_bytes"] * 9 // 10
    assert main([*argv, "--ram-budget", str(budget), "-o", str(tmp_path / "remat.tflite")]) == 0
    remat = json.loads(capsys.readouterr().out)
    assert remat["arena_bytes"] <= budget < plain["arena_bytes"]
    assert remat["schedule"]["recomputed"] and remat["schedule"]["optimal"]
    assert remat["schedule"]["cost"] > remat["schedule"]["store_all_cost"]
    # next to it, the baseline the host allows (no slow memory: recomputation only), same cost
    (base,) = remat["schedule"]["baselines"]
    assert base["scheduler"] == "remat" and base["cost"] == remat["schedule"]["cost"]
    # the host has no energy model: --objective energy is one error line
    energy = [*argv, "--ram-budget", str(budget), "--objective", "energy"]
    assert main(energy) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs the board's energy model; host has none" in err[0], err
    assert (tmp_path / "remat.tflite").read_bytes() == (tmp_path / "plain.tflite").read_bytes()
    assert remat["loss"] == plain["loss"]
    # below what the schedule's model allows, the host's slow memory takes the rest in place
    paged = tmp_path / "paged.tflite"
    assert main([*argv, "--ram-budget", str(budget // 2), "-o", str(paged)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["arena_bytes"] <= budget // 2 and report["paging"]["bytes_out_per_step"] > 0
    assert "in place" in report["schedule"]["note"]
    assert paged.read_bytes() == (tmp_path / "plain.tflite").read_bytes()
    # with copies only, every operand must be in RAM: one error line, no output
    low = tmp_path / "low.tflite"
    assert main([*argv, "--ram-budget", str(budget // 2), "--copies-only", "-o", str(low)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no schedule exists within a RAM budget" in err[0], err
    assert not low.exists()


def test_plan_pareto_curve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mcugen plan --trainable all --pareto 4` (the host: recomputation only): at every budget
    the joint schedule costs no more than recomputation alone; a larger budget never costs more,
    and below a budget without a schedule there is none; the chart is the same bytes on a second
    run; the text has the table."""
    model = tmp_path / "chain.tflite"
    model.write_bytes(write_model(conv_chain()))
    argv = ["plan", str(model), "--trainable", "all", "--pareto", "4"]
    assert main([*argv, "--json", "--pareto-chart", str(tmp_path / "a.svg")]) == 0
    points = json.loads(capsys.readouterr().out)["pareto"]
    budgets = sorted({p["budget"] for p in points}, reverse=True)
    assert len(budgets) == 4
    cost = {(p["scheduler"], p["budget"]): p["cost"] for p in points}
    poet = [cost["poet", b] for b in budgets]
    found = [c for c in poet if c is not None]
    assert poet[0] is not None and poet[: len(found)] == found  # none below the first failure
    assert found == sorted(found) and len(found) >= 2  # less RAM, never cheaper
    for b in budgets:
        remat = cost["remat", b]
        assert remat is None or cost["poet", b] <= remat
    assert main([*argv, "--pareto-chart", str(tmp_path / "b.svg")]) == 0
    assert "| budget B | poet: cost" in capsys.readouterr().out
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


def test_a_solve_cut_short_says_it_is_not_optimal(monkeypatch: pytest.MonkeyPatch) -> None:
    """With too little work the exact scheduler returns its start, not optimal, under a bound
    below its cost; with enough it proves a cheaper optimum (CP-SAT's work is deterministic).
    Ruin and recreate is off: on this graph it finds the optimum before CP-SAT starts."""
    monkeypatch.setattr(schedule_package, "RUINS", 0)
    graph = build_training_graph(conv_chain(), TrainOptions(trainable="all")).graph
    problem = training_problem(graph, estimated_cycles(graph), PageCosts(2, 2))
    peak = simulate(problem, SCHEDULERS.get("store_all")(problem, Budgets())).peak
    ram = peak * 8 // 10
    short = SCHEDULERS.get("poet")(problem, Budgets(ram=ram, work=0.001))
    cost = validate(problem, short, ram_budget=ram).cost
    assert not short.optimal and short.lower_bound is not None and short.lower_bound < cost
    full = SCHEDULERS.get("poet")(problem, Budgets(ram=ram, work=10))
    best = validate(problem, full, ram_budget=ram).cost
    assert full.optimal and full.lower_bound == best < cost


def test_ruin_and_recreate_finds_what_the_greedy_misses() -> None:
    """The greedy takes the cheapest move at the peak and never undoes it; at 85 % of this
    graph's peak that costs 211,833 where the optimum is 197,817 (exhaustive search). Banning the
    greedy's moves one at a time finds the optimum; it never returns anything dearer than its
    start, and stops at once when the start is close enough or it has no runs."""
    graph = build_training_graph(conv_chain(), TrainOptions(trainable="all")).graph
    problem = training_problem(graph, estimated_cycles(graph), PageCosts(2, 2))
    peak = simulate(problem, SCHEDULERS.get("store_all")(problem, Budgets())).peak
    ram = peak * 85 // 100
    start = greedy(problem, ram)
    assert validate(problem, start, ram_budget=ram).cost == 211_833

    def ruined(runs: int, enough: int = 0) -> Schedule:
        return ruin_and_recreate(
            problem,
            ram,
            start,
            recompute=True,
            capped=True,
            runs=runs,
            enough=lambda c: c <= enough,
        )

    best = ruined(50)
    assert validate(problem, best, ram_budget=ram).cost == 197_817
    assert SCHEDULERS.get("poet")(problem, Budgets(ram=ram)).optimal  # the bound proves it
    assert ruined(0) is start and ruined(50, enough=211_833) is start
    for runs in range(1, 6):
        assert 197_817 <= validate(problem, ruined(runs), ram_budget=ram).cost <= 211_833


def test_the_gap_and_the_size_limit_stop_early_with_a_true_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A schedule within the gap of the bound, or of a graph above the size limit, is the
    heuristic start: valid, not above the gap (or not claimed optimal), and never below the
    exact optimum; the exact search with no gap finds the optimum, cheaper here."""
    graph = build_training_graph(conv_chain(), TrainOptions(trainable="all")).graph
    problem = training_problem(graph, estimated_cycles(graph), PageCosts(2, 2))
    peak = simulate(problem, SCHEDULERS.get("store_all")(problem, Budgets())).peak
    ram = peak * 8 // 10
    best = validate(problem, SCHEDULERS.get("poet")(problem, Budgets(ram=ram)), ram_budget=ram)
    loose = SCHEDULERS.get("poet")(problem, Budgets(ram=ram, gap=0.5))
    cost = validate(problem, loose, ram_budget=ram).cost
    assert loose.lower_bound is not None and cost - loose.lower_bound <= 0.5 * cost
    assert best.cost < cost and not loose.optimal
    large = SCHEDULERS.get("poet")(problem, Budgets(ram=ram, size=0))
    # above the size limit, ruin and recreate still runs: here it finds the optimum, proven
    assert validate(problem, large, ram_budget=ram).cost == best.cost and large.optimal
    monkeypatch.setattr(schedule_package, "RUINS", 0)
    large = SCHEDULERS.get("poet")(problem, Budgets(ram=ram, size=0))
    assert validate(problem, large, ram_budget=ram).cost == cost and not large.optimal


def test_the_energy_objective_prices_what_time_does_not() -> None:
    """--objective energy (issue 14): operators cost their instructions times the energy of one,
    pages their cycles times the energy of one plus the memories' energy per byte. Without that
    per-byte energy, energy is time rescaled and the schedule is the same; with a costly slow
    memory, the optimum moves from paging towards recomputation, and time stays in cycles."""
    graph = build_training_graph(conv_chain(), TrainOptions(trainable="all")).graph
    cycles = estimated_cycles(graph)
    page = PageCosts(2, 2)
    timed = training_problem(graph, cycles, page)
    peak = simulate(timed, SCHEDULERS.get("store_all")(timed, Budgets())).peak
    ram = peak * 7 // 10

    def best(energy: EnergyPrices | None) -> tuple[int, int, int]:
        problem = training_problem(graph, cycles, page, energy=energy)
        schedule = SCHEDULERS.get("poet")(problem, Budgets(ram=ram, work=10))
        o = validate(problem, schedule, ram_budget=ram)
        assert schedule.optimal and [n.time for n in problem.nodes] == [n.time for n in timed.nodes]
        return o.cost, o.time, o.paged_out + o.paged_in

    time_cost, time_time, time_paged = best(None)
    plain = best(EnergyPrices(per_instruction=500.0, per_cycle=500.0))
    assert plain == (time_cost * 500, time_time, time_paged)
    assert time_paged > 0  # the time optimum pages here
    costly = best(EnergyPrices(500.0, 500.0, out_extra=1e6, in_extra=1e6))
    assert costly[2] < time_paged and costly[1] >= time_time
