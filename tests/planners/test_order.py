"""Order strategies: valid topological orders, peaks as `peak_of` counts them, proven lower bounds,
determinism, and `optimal` against brute-force enumeration of every topological order."""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.tflite_import import load_model
from mcugen.plan.buffers import op_working_set_bound
from mcugen.plan.order import ORDERS, OrderResult, peak_of, stored_order
from mcugen.plan.order.beam import beam_order
from mcugen.plan.order.cuts import split_into_pieces
from mcugen.plan.order.greedy import greedy_order
from mcugen.plan.order.optimal import optimal_order
from mcugen.plan.order.state import build_model
from support import FULL_SWEEP, SHARED_MODELS

needs_models = pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
REAL_MODELS = sorted(SHARED_MODELS.glob("*.tflite")) if SHARED_MODELS.is_dir() else []
#: No time budget runs out on the graphs of these tests: results must be exact and deterministic.
NO_LIMIT = 60.0


# ---------------------------------------------------------------------------------------------
# Graphs


@st.composite
def order_dags(draw: st.DrawFn, max_ops: int = 25) -> tuple[Graph, dict[int, int]]:
    """Random graphs with what the planners must handle: several inputs and outputs; operators
    with several, zero-size, unread or no outputs; graph outputs also read by other operators or
    written by none; constant inputs; scratch. Returns (graph, scratch bytes by operator)."""
    n_inputs = draw(st.integers(1, 3))
    tensors = [Tensor(i, f"in{i}", (draw(st.integers(0, 3000)),), "int8") for i in range(n_inputs)]
    tensors.append(Tensor(n_inputs, "weights", (8,), "int8", data=bytes(8)))
    ops: list[Operator] = []
    for k in range(draw(st.integers(1, max_ops))):
        pool = [t for t in range(len(tensors)) if not tensors[t].is_constant or k % 3 == 0]
        reads = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
        outs = []
        for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):  # 0: like ASSIGN_VARIABLE
            size = draw(st.sampled_from([0, 1, 16, 100, 500, 1000, 2000, 4000]))
            outs.append(len(tensors))
            tensors.append(Tensor(len(tensors), f"t{len(tensors)}", (size,), "int8"))
        ops.append(Operator(k, "ADD", 1, tuple(reads), tuple(outs), MappingProxyType({})))
    consumed = {t for op in ops for t in op.inputs}
    produced = [t for op in ops for t in op.outputs]
    unread = [t for t in produced if t not in consumed]
    outputs = [t for t in unread if draw(st.booleans())] or produced[-1:] or [0]
    if produced:
        outputs += draw(st.lists(st.sampled_from(produced), max_size=2, unique=True))
    if draw(st.integers(0, 9)) == 0:
        outputs.append(0)  # a graph input that is also a graph output
    if draw(st.integers(0, 14)) == 0:  # an output no operator writes: live at the last step only
        outputs.append(len(tensors))
        tensors.append(Tensor(len(tensors), "unwritten", (draw(st.integers(1, 3000)),), "int8"))
    scratch = {k: draw(st.sampled_from([0, 8, 300])) for k in range(len(ops))}
    graph = Graph(tuple(tensors), tuple(ops), tuple(range(n_inputs)), tuple(dict.fromkeys(outputs)))
    return graph, scratch


def topological_orders(graph: Graph) -> Iterator[tuple[int, ...]]:
    """Every order in which each operator runs after the producers of its inputs."""
    producer = graph.producers()
    preds = [{producer[t] for t in op.inputs if t in producer} for op in graph.operators]
    n = len(graph.operators)

    def extend(prefix: list[int], done: set[int]) -> Iterator[tuple[int, ...]]:
        if len(prefix) == n:
            yield tuple(prefix)
        for v in range(n):
            if v not in done and preds[v] <= done:
                yield from extend([*prefix, v], done | {v})

    return extend([], set())


def is_topological(graph: Graph, order: tuple[int, ...]) -> bool:
    if sorted(order) != list(range(len(graph.operators))):
        return False
    producer = graph.producers()
    position = {v: k for k, v in enumerate(order)}
    return all(
        position[producer[t]] < position[op.index]
        for op in graph.operators
        for t in op.inputs
        if t in producer
    )


def brute_force_peak(graph: Graph, scratch: dict[int, int]) -> int:
    return min(peak_of(graph, order, scratch) for order in topological_orders(graph))


def check_result(graph: Graph, scratch: dict[int, int] | None, result: OrderResult) -> None:
    """What every strategy promises about its result."""
    assert is_topological(graph, result.order)
    assert result.peak_live_bytes == peak_of(graph, result.order, scratch)
    assert result.peak_live_bytes >= result.lower_bound
    assert result.lower_bound >= op_working_set_bound(graph, scratch)
    assert result.proven_optimal == (result.peak_live_bytes == result.lower_bound)


def inception_cells(cells: int = 3, branches: int = 4) -> Graph:
    """A chain of Inception/NAS-like cells stored breadth first, as converters often emit them:
    each branch expands the cell input to a large tensor, transforms it, and projects it back to
    a small one; a concatenation joins the branches. Breadth first keeps every branch's large
    tensor live at once; running one branch after the other keeps only one."""
    big, small, cell_io = 8000, 1000, 2000
    tensors = [Tensor(0, "input", (cell_io,), "int8")]
    ops: list[Operator] = []

    def new_tensor(size: int) -> int:
        tensors.append(Tensor(len(tensors), f"t{len(tensors)}", (size,), "int8"))
        return len(tensors) - 1

    def add(opcode: str, reads: tuple[int, ...], size: int) -> int:
        out = new_tensor(size)
        ops.append(Operator(len(ops), opcode, 1, reads, (out,), MappingProxyType({})))
        return out

    x = 0
    for _ in range(cells):
        level = [add("CONV_2D", (x,), big) for _ in range(branches)]
        level = [add("DEPTHWISE_CONV_2D", (t,), big) for t in level]
        level = [add("CONV_2D", (t,), small) for t in level]
        x = add("CONCATENATION", tuple(level), cell_io)
    return Graph(tuple(tensors), tuple(ops), (0,), (x,))


# ---------------------------------------------------------------------------------------------
# Properties of every strategy


@pytest.mark.parametrize("name", sorted(ORDERS))
@settings(max_examples=120 if FULL_SWEEP else 50, deadline=None)
@given(case=order_dags())
def test_every_strategy_gives_a_valid_order(name: str, case: tuple[Graph, dict[int, int]]) -> None:
    graph, scratch = case
    result = ORDERS[name](graph, scratch=scratch, time_budget=NO_LIMIT)
    check_result(graph, scratch, result)
    assert ORDERS[name](graph, scratch=scratch, time_budget=NO_LIMIT) == result  # deterministic


@settings(max_examples=100 if FULL_SWEEP else 50, deadline=None)
@given(case=order_dags())
def test_optimal_beats_greedy_beats_stored(case: tuple[Graph, dict[int, int]]) -> None:
    graph, scratch = case
    best = optimal_order(graph, scratch=scratch, time_budget=NO_LIMIT)
    assert best.proven_optimal
    greedy = greedy_order(graph, scratch=scratch).peak_live_bytes
    assert best.peak_live_bytes <= greedy <= stored_order(graph, scratch=scratch).peak_live_bytes


@pytest.mark.parametrize("name", sorted(ORDERS))
def test_every_strategy_on_a_graph_without_operators(name: str) -> None:
    tensors = (Tensor(0, "in", (10,), "int8"), Tensor(1, "out", (40,), "int8"))
    graph = Graph(tensors, (), (0,), (1,))
    result = ORDERS[name](graph)
    assert result.order == ()
    assert result.peak_live_bytes == peak_of(graph, ()) == 64


def test_greedy_and_optimal_are_registered() -> None:
    assert ORDERS["greedy"] is greedy_order
    assert ORDERS["optimal"] is optimal_order


@settings(max_examples=300 if FULL_SWEEP else 120, deadline=None)
@given(case=order_dags(max_ops=8))
def test_optimal_matches_brute_force(case: tuple[Graph, dict[int, int]]) -> None:
    graph, scratch = case
    best = brute_force_peak(graph, scratch)
    result = optimal_order(graph, scratch=scratch, time_budget=NO_LIMIT)
    check_result(graph, scratch, result)
    assert result.peak_live_bytes == best
    assert result.proven_optimal and result.note == ""
    assert greedy_order(graph, scratch=scratch).peak_live_bytes >= best
    assert stored_order(graph, scratch=scratch).peak_live_bytes >= best


@settings(max_examples=150, deadline=None)
@given(case=order_dags(), data=st.data())
def test_live_memory_model_is_peak_of(case: tuple[Graph, dict[int, int]], data: st.DataObject):
    """The search's set-based bookkeeping counts exactly what `peak_of` counts, for any order."""
    graph, scratch = case
    model = build_model(graph, scratch)
    order: list[int] = []
    done: set[int] = set()
    producer = graph.producers()
    while len(order) < len(graph.operators):
        ready = [
            op.index
            for op in graph.operators
            if op.index not in done and all(producer.get(t, -1) in done | {-1} for t in op.inputs)
        ]
        v = data.draw(st.sampled_from(ready))
        order.append(v)
        done.add(v)
    assert model.peak(order) == peak_of(graph, tuple(order), scratch)


@settings(max_examples=100, deadline=None)
@given(case=order_dags())
def test_pieces_partition_the_operators_in_execution_order(case: tuple[Graph, dict[int, int]]):
    graph, scratch = case
    model = build_model(graph, scratch)
    pieces = split_into_pieces(model)
    before = 0
    for piece in pieces:
        assert piece.before == before and piece.ops and piece.ops & before == 0
        before = piece.goal
    assert before == model.full
    # every topological order runs the pieces one after the other
    position = {v: k for k, v in enumerate(stored_order(graph).order)}
    for earlier, later in zip(pieces, pieces[1:], strict=False):
        last = max(position[v] for v in range(model.n) if earlier.ops >> v & 1)
        assert all(position[v] > last for v in range(model.n) if later.ops >> v & 1)


@settings(max_examples=100, deadline=None)
@given(case=order_dags(), width=st.sampled_from([1, 3, 16]))
def test_beam_orders_are_valid_and_never_below_optimal(
    case: tuple[Graph, dict[int, int]], width: int
) -> None:
    graph, scratch = case
    model = build_model(graph, scratch)
    order: list[int] = []
    peak = model.start_bytes
    for piece in split_into_pieces(model):
        run = beam_order(model, piece, floor=0, width=width)
        assert run is not None
        order.extend(run[0])
        peak = max(peak, run[1])
    assert is_topological(graph, tuple(order))
    assert peak == peak_of(graph, tuple(order), scratch)
    assert peak >= optimal_order(graph, scratch=scratch, time_budget=NO_LIMIT).peak_live_bytes


# ---------------------------------------------------------------------------------------------
# Constructed graphs


def test_optimal_beats_breadth_first_inception_cells() -> None:
    graph = inception_cells()
    stored = stored_order(graph)
    best = optimal_order(graph, time_budget=NO_LIMIT)
    check_result(graph, None, best)
    assert best.proven_optimal
    assert len(split_into_pieces(build_model(graph))) >= 3  # the cells are solved one by one
    # breadth first: the 4 large tensors of the first level and one of the second are live at once.
    # One branch at a time: the cell input, two large tensors of the third branch and the small
    # outputs of the first two (the last branch no longer needs the cell input).
    assert stored.peak_live_bytes == 5 * 8000
    assert best.peak_live_bytes == 2000 + 2 * 8000 + 2 * 1008
    assert stored.peak_live_bytes / best.peak_live_bytes > 1.95
    assert greedy_order(graph).peak_live_bytes <= stored.peak_live_bytes


def test_time_budget_returns_best_order_and_proven_lower_bound() -> None:
    graph = inception_cells(cells=2, branches=6)
    result = optimal_order(graph, time_budget=0.0)
    check_result(graph, None, result)
    exact = optimal_order(graph, time_budget=NO_LIMIT)
    assert exact.proven_optimal
    assert result.lower_bound <= exact.peak_live_bytes <= result.peak_live_bytes
    if not result.proven_optimal:
        assert result.note.startswith("time budget reached")


def randwire_like(n: int, seed: int, window: int) -> Graph:
    """A RandWire-like graph: each operator reads 1-3 of the `window` latest tensors."""
    rng = random.Random(seed)
    tensors = [Tensor(0, "in", (2048,), "int8")]
    ops = []
    for k in range(n):
        pool = list(range(max(0, len(tensors) - window), len(tensors)))
        reads = tuple(sorted(rng.sample(pool, min(len(pool), rng.randint(1, 3)))))
        tensors.append(Tensor(k + 1, f"t{k + 1}", (rng.choice((256, 1024, 4096, 8192)),), "int8"))
        ops.append(Operator(k, "ADD", 1, reads, (k + 1,), MappingProxyType({})))
    consumed = {t for op in ops for t in op.inputs}
    outputs = tuple(t for t in range(1, n + 1) if t not in consumed)
    return Graph(tuple(tensors), tuple(ops), (0,), outputs)


@pytest.mark.parametrize("window", [4, 12])
def test_optimal_on_hundreds_of_operators(window: int) -> None:
    """Valid and never worse than greedy whether or not the search finishes in its budget."""
    graph = randwire_like(300, seed=window, window=window)
    result = optimal_order(graph, time_budget=0.2)
    check_result(graph, None, result)
    assert result.peak_live_bytes <= greedy_order(graph).peak_live_bytes
    assert result.proven_optimal or result.note.startswith("time budget reached")


def test_operators_sharing_a_variable_keep_their_stored_order() -> None:
    """A state update (writes a variable) and a read of it are not reordered for memory."""
    tensors = (
        Tensor(0, "in", (16,), "int8"),
        Tensor(1, "state", (16,), "int8", is_variable=True),
        Tensor(2, "big", (4000,), "int8"),
        Tensor(3, "out", (16,), "int8"),
        Tensor(4, "read", (16,), "int8"),
    )
    ops = (
        Operator(0, "ADD", 1, (0, 1), (2,)),  # reads the state, makes a large tensor
        Operator(1, "ASSIGN_LIKE", 1, (0,), (1,)),  # updates the state
        Operator(2, "ADD", 1, (2, 1), (3,)),
    )
    graph = Graph(tensors, ops, (0,), (3,))
    for name in ("greedy", "optimal"):
        assert ORDERS[name](graph).order == (0, 1, 2)


# ---------------------------------------------------------------------------------------------
# Real models


@cache
def real_results(name: str) -> dict[str, OrderResult]:
    graph = load_model(SHARED_MODELS / f"{name}.tflite")
    return {strategy: ORDERS[strategy](graph) for strategy in sorted(ORDERS)}


@needs_models
@pytest.mark.parametrize("path", REAL_MODELS, ids=lambda p: p.stem)
def test_real_models(path) -> None:
    graph = load_model(path)
    results = real_results(path.stem)
    for name, result in results.items():
        check_result(graph, None, result)
        assert ORDERS[name](graph) == result
    assert results["optimal"].proven_optimal
    assert results["optimal"].peak_live_bytes <= results["greedy"].peak_live_bytes
    assert results["greedy"].peak_live_bytes <= results["stored"].peak_live_bytes
