"""Training schedules (mcugen/train/schedule/): on graphs small enough to enumerate, the exact
scheduler's cost equals an exhaustive search over the same space (program.py's stages), with and
without paging, recomputation and a time budget; every scheduler's schedule passes the validator;
the validator refuses broken schedules. Schedules of training graphs: test_schedule_runs.py."""

from __future__ import annotations

from itertools import chain, combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from mcugen.train.schedule.bound import lower_bound
from mcugen.train.schedule.cpsat import least_ram
from mcugen.train.schedule.program import run_stage
from support import FULL_SWEEP


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
