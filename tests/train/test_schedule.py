"""Training schedules (mcugen/train/schedule/): on graphs small enough to enumerate, the exact
scheduler's cost equals an exhaustive search over the same space (program.py's stages), with and
without paging, recomputation and a time budget; every scheduler's schedule passes the validator;
the validator refuses broken schedules. A training graph becomes a problem whose forward operators
are not recomputed after their weights' update, and `mcugen train --ram-budget` recomputes to meet
the budget and trains bit for bit as store-all does."""

from __future__ import annotations

import json
from itertools import chain, combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcugen.train.schedule as schedule_package
from mcugen.cli import main
from mcugen.model.tflite_write import write_model
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from mcugen.train.schedule import (
    SCHEDULERS,
    Budgets,
    Node,
    Schedule,
    ScheduleError,
    ScheduleInvalid,
    ScheduleProblem,
    Stage,
    simulate,
    validate,
)
from mcugen.train.schedule.baselines import greedy, ruin_and_recreate
from mcugen.train.schedule.bound import lower_bound
from mcugen.train.schedule.cpsat import least_ram
from mcugen.train.schedule.program import run_stage
from mcugen.train.schedule.training import (
    EnergyPrices,
    PageCosts,
    estimated_cycles,
    training_problem,
    updated_variables,
)
from support import FULL_SWEEP, conv_chain


def subsets(items: list[int]) -> list[frozenset[int]]:
    return [
        frozenset(c)
        for c in chain.from_iterable(combinations(items, r) for r in range(len(items) + 1))
    ]


def exhaustive(problem: ScheduleProblem, ram: int | None, time: int | None) -> int | None:
    """The least cost over every stage-by-stage choice (what to recompute, page in, page out and
    keep), by dynamic programming over (kept, stored) with Pareto sets of (cost, time)."""
    n = len(problem.nodes)
    outputs = frozenset(i for i, node in enumerate(problem.nodes) if node.output)
    frontier: dict[tuple[frozenset[int], frozenset[int]], set[tuple[int, int]]] = {
        (frozenset(), frozenset()): {(0, 0)}
    }
    for t in range(n):
        after: dict[tuple[frozenset[int], frozenset[int]], set[tuple[int, int]]] = {}
        for (kept, stored), pairs in frontier.items():
            again = [i for i in range(t) if problem.may_recompute(i, t) and i not in kept]
            for extra in subsets(again):
                compute = (*sorted(extra), t)
                ins = subsets(sorted(stored - kept - extra)) if problem.paging else [frozenset()]
                for page_in in ins:
                    held = kept | page_in | set(compute)
                    keeps = [outputs] if t == n - 1 else subsets(sorted(held))
                    outs = (
                        subsets(sorted((kept | set(compute)) - stored))
                        if problem.paging
                        else [frozenset()]
                    )
                    for keep in keeps:
                        for page_out in outs:
                            stage = Stage(compute, page_in, page_out, keep)
                            try:
                                ram_end, peak, _ = run_stage(problem, t, stage, kept, set(stored))
                            except ScheduleInvalid:
                                continue
                            if not keep <= ram_end or (ram is not None and peak > ram):
                                continue
                            cost, cycles = _stage_cost(problem, stage)
                            key = (keep, stored | page_out)
                            for c, s in pairs:
                                if time is None or s + cycles <= time:
                                    after.setdefault(key, set()).add((c + cost, s + cycles))
        frontier = {k: _pareto(v) for k, v in after.items()}
    costs = [c for pairs in frontier.values() for c, _ in pairs]
    return min(costs) if costs else None


def _stage_cost(problem: ScheduleProblem, stage: Stage) -> tuple[int, int]:
    cost = sum(problem.nodes[k].cost for k in stage.compute)
    time = sum(problem.nodes[k].time for k in stage.compute)
    for i in stage.page_in:
        c, s = problem.in_cost(i)
        cost, time = cost + c, time + s
    for i in stage.page_out:
        c, s = problem.out_cost(i)
        cost, time = cost + c, time + s
    return cost, time


def _pareto(pairs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    best: set[tuple[int, int]] = set()
    bound = None
    for c, s in sorted(pairs):
        if bound is None or s < bound:
            best.add((c, s))
            bound = s
    return best


@st.composite
def problems(draw: st.DrawFn, max_nodes: int = 5) -> ScheduleProblem:
    """A graph input, then nodes reading the node before them and perhaps an earlier one (a skip
    connection, as a backward operator reads a forward activation); the last is the output."""
    count = draw(st.integers(3, max_nodes))
    nodes = [Node("in", draw(st.integers(1, 6)), 0, 0, (), recomputable=False)]
    for k in range(1, count):
        inputs = {k - 1, draw(st.integers(0, k - 1))}
        nodes.append(
            Node(
                f"n{k}",
                draw(st.integers(1, 6)),
                cost := draw(st.integers(1, 5)),
                cost * draw(st.integers(1, 3)),
                tuple(sorted(inputs)),
                recomputable=draw(st.booleans()) or k < count - 1,
                output=k == count - 1,
            )
        )
    paging = draw(st.booleans())
    return ScheduleProblem(
        tuple(nodes),
        page_out_cost=draw(st.integers(1, 3)) if paging else None,
        page_in_cost=draw(st.integers(1, 3)) if paging else None,
        page_out_time=1,
        page_in_time=1,
        fixed_cost=draw(st.integers(0, 2)),
    )


@settings(max_examples=60, deadline=None)
@given(problem=problems(), ram_share=st.floats(0, 1), timed=st.booleans(), data=st.data())
def test_the_exact_scheduler_equals_exhaustive_search(
    problem: ScheduleProblem, ram_share: float, timed: bool, data: st.DataObject
) -> None:
    peak = simulate(problem, SCHEDULERS.get("store_all")(problem, Budgets())).peak
    low = least_ram(problem)[0]
    ram = low + int(ram_share * (peak - low))
    base_time = sum(node.time for node in problem.nodes)
    time = base_time + data.draw(st.integers(0, 10)) if timed else None
    expected = exhaustive(problem, ram, time)
    try:
        schedule = SCHEDULERS.get("poet")(problem, Budgets(ram=ram, time=time))
    except ScheduleError:
        assert expected is None
        return
    outcome = validate(problem, schedule, ram_budget=ram, time_budget=time)
    assert schedule.optimal
    assert outcome.cost == expected


@settings(max_examples=150 if FULL_SWEEP else 60, deadline=None)
@given(problem=problems(max_nodes=6), ram_share=st.floats(0, 1))
def test_the_lower_bound_never_exceeds_the_optimum(
    problem: ScheduleProblem, ram_share: float
) -> None:
    peak = simulate(problem, SCHEDULERS.get("store_all")(problem, Budgets())).peak
    low = least_ram(problem)[0]
    ram = low + int(ram_share * (peak - low))
    expected = exhaustive(problem, ram, None)
    bound = lower_bound(problem, ram)
    if expected is None:
        return
    assert bound is not None and bound <= expected


def test_the_bound_charges_a_recomputation_for_its_dead_input() -> None:
    """At c's stage, a (4 bytes) must leave RAM. Recomputing it later needs x, which only a reads:
    x must then stay in RAM (and a frees only 2 bytes) or come back itself (paged, 2 x 2 x 3).
    Counting a's recomputation alone (1), the first version of the bound said 11; charging the
    input makes it 42, the exact optimum (the costs: 5 to run every node once, and 37)."""
    nodes = (
        Node("in", 4, 0, 0, (), recomputable=False),
        Node("x", 2, 1, 1, (0,), recomputable=False),
        Node("a", 4, 1, 1, (1,)),
        Node("b", 4, 1, 1, (0,)),
        Node("c", 1, 1, 1, (3,)),
        Node("d", 1, 1, 1, (4, 2), output=True),
    )
    problem = ScheduleProblem(nodes, 3, 3, 1, 1)
    cost = validate(problem, SCHEDULERS.get("poet")(problem, Budgets(ram=9))).cost
    assert lower_bound(problem, 9) == exhaustive(problem, 9, None) == cost == 42


@settings(max_examples=40, deadline=None)
@given(problem=problems(max_nodes=7), ram_share=st.floats(0, 1))
def test_every_scheduler_meets_its_budget_or_says_so(
    problem: ScheduleProblem, ram_share: float
) -> None:
    """Each scheduler's schedule passes the validator under the budget, or it raises
    ScheduleError; joint schedules cost no more than recomputation or paging alone, and the
    same problem gives the same schedule again."""
    peak = simulate(problem, SCHEDULERS.get("store_all")(problem, Budgets())).peak
    low = least_ram(problem)[0]
    budgets = Budgets(ram=low + int(ram_share * (peak - low)))
    costs = {}
    for name in SCHEDULERS.names():
        try:
            schedule = SCHEDULERS.get(name)(problem, budgets)
        except ScheduleError:
            continue
        costs[name] = validate(problem, schedule, ram_budget=budgets.ram).cost
        assert SCHEDULERS.get(name)(problem, budgets) == schedule
    if "poet" in costs:
        assert all(costs["poet"] <= cost for cost in costs.values())
    else:
        assert not costs


def skip_chain(paging: bool = True) -> ScheduleProblem:
    """input -> a -> b -> c -> d, d also reading the input: the input (not recomputable) must be
    kept or paged while a, b and c run."""
    nodes = (
        Node("in", 4, 0, 0, (), recomputable=False),
        Node("a", 4, 1, 1, (0,)),
        Node("b", 4, 1, 1, (1,)),
        Node("c", 4, 1, 1, (2,)),
        Node("d", 1, 1, 1, (3, 0), output=True),
    )
    return ScheduleProblem(nodes, 1, 1, 1, 1) if paging else ScheduleProblem(nodes)


def test_the_input_is_paged_when_it_cannot_be_recomputed() -> None:
    problem = skip_chain()
    schedule = SCHEDULERS.get("poet")(problem, Budgets(ram=9))
    outcome = validate(problem, schedule, ram_budget=9)
    assert (outcome.peak, outcome.paged_out, outcome.paged_in, outcome.recomputed) == (9, 4, 4, 0)
    assert schedule.optimal and schedule.lower_bound == outcome.cost == 12
    with pytest.raises(ScheduleError, match=r"RAM budget of 8 bytes \(d alone needs 9 bytes"):
        SCHEDULERS.get("poet")(problem, Budgets(ram=8))
    with pytest.raises(ScheduleError, match="no schedule exists"):
        SCHEDULERS.get("poet")(skip_chain(paging=False), Budgets(ram=9))
    with pytest.raises(ScheduleError, match="over the time budget"):
        SCHEDULERS.get("store_all")(problem, Budgets(time=3))


def test_the_validator_refuses_broken_schedules() -> None:
    problem = skip_chain()
    good = SCHEDULERS.get("store_all")(problem, Budgets())
    stages = list(good.stages)

    def broken(t: int, stage: Stage) -> Schedule:
        return Schedule(tuple(stages[:t] + [stage] + stages[t + 1 :]), "test")

    cases = {
        "needs [0] in RAM": broken(0, Stage((0,))),
        "pages in [0]": broken(4, Stage((4,), page_in=frozenset({0}), keep=frozenset({4}))),
        "may not recompute 0": broken(2, Stage((0, 2), keep=frozenset({0, 2}))),
        "increasing, ending with 3": broken(3, Stage((3, 2), keep=frozenset({0, 3}))),
        "outputs [4] are not in RAM": broken(4, Stage((4,))),
        "keeps [2]": broken(1, Stage((1,), keep=frozenset({0, 1, 2}))),
    }
    for message, schedule in cases.items():
        with pytest.raises(ScheduleInvalid, match=message.replace("[", r"\[").replace("]", r"\]")):
            simulate(problem, schedule)
    with pytest.raises(ScheduleInvalid, match="peak 12 bytes over the budget of 11"):
        validate(problem, good, ram_budget=11)
    with pytest.raises(ScheduleInvalid, match="lower bound 5 above the cost 4"):
        validate(problem, Schedule(good.stages, "test", lower_bound=5))


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
