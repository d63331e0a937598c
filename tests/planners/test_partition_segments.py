"""A partition cut into per-board sub-models (plan/partition/segments.py): on random graphs and
random assignments every operator runs in exactly one segment, the run order delivers every
input before its segment runs, the model outputs all come out, and the sub-graphs keep every
tensor's shape, dtype, quantization and bytes; on the LCP example the cut is the expected one
and each sub-model is a valid model file."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model, load_model
from mcugen.model.tflite_write import write_model
from mcugen.plan.partition import PARTITIONERS, BoardSpec, Partition, partition_problem
from mcugen.plan.partition.problem import LinkModel
from mcugen.plan.partition.segments import segments
from mcugen.plan.target import MemoryTarget
from support import ROOT, random_dags

LCP = ROOT / "examples" / "lcp_k4_int8.tflite"
HUGE = BoardSpec(MemoryTarget("huge", 1 << 30, 1 << 30), 216_000_000)
F767 = BoardSpec(MemoryTarget("nucleo-f767", 524288 - 8192 - 1184, 1572864), 216_000_000)


def check_segments(graph: Graph, part: Partition) -> None:
    segs = segments(graph, part)
    ran = [op for s in segs for op in s.ops]
    assert sorted(ran) == list(range(len(graph.operators)))
    available = set(graph.inputs)
    for s in segs:
        assert {part.assignment[op] for op in s.ops} == {s.board}
        assert set(s.inputs) <= available
        available |= set(s.outputs)
        sub = s.graph
        assert len(sub.operators) == len(s.ops)
        for new, old in (
            *zip(sub.inputs, s.inputs, strict=True),
            *zip(sub.outputs, s.outputs, strict=True),
        ):
            assert replace(sub.tensors[new], index=old) == graph.tensors[old]
        for op, k in zip(sub.operators, s.ops, strict=True):
            assert op.opcode == graph.operators[k].opcode
            assert [sub.tensors[t].name for t in op.inputs if t >= 0] == [
                graph.tensors[t].name for t in graph.operators[k].inputs if t >= 0
            ]
    assert set(graph.outputs) <= available
    for board in set(part.assignment):
        assert any(s.board == board for s in segs)


@settings(max_examples=40, deadline=None)
@given(graph=random_dags(), data=st.data())
def test_random_assignments_cut_into_runnable_segments(graph: Graph, data: st.DataObject) -> None:
    boards = data.draw(st.integers(1, 4))
    assignment = data.draw(
        st.lists(
            st.integers(0, boards - 1), min_size=len(graph.operators), max_size=len(graph.operators)
        )
    )
    problem = partition_problem(graph, [HUGE] * boards)
    check_segments(graph, Partition.of("random", problem, assignment))


@pytest.mark.parametrize("kind", ["inception", "two_tower", "nas_cells"])
def test_branchy_examples_cut_under_every_strategy(kind: str) -> None:
    graph = load_model(ROOT / "examples" / f"{kind}_int8.tflite")
    for boards in (2, 3, 4):
        problem = partition_problem(graph, [F767] * boards)
        for name in PARTITIONERS:
            check_segments(graph, PARTITIONERS[name](problem, budget=0.2))


def test_one_board_is_one_segment() -> None:
    graph = load_model(LCP)
    problem = partition_problem(graph, [F767] * 2)
    (only,) = segments(graph, PARTITIONERS.get("single")(problem))
    assert only.ops == tuple(range(len(graph.operators)))
    assert only.inputs == graph.inputs and only.outputs == graph.outputs


def test_lcp_branch_cut_stem_branches_merge() -> None:
    graph = load_model(LCP)
    # at 921,600 baud the four branches pay for their links (at 115,200 only three do)
    part = PARTITIONERS.get("branch")(partition_problem(graph, [F767] * 4, LinkModel(921600)))
    segs = segments(graph, part)
    check_segments(graph, part)
    assert [s.board for s in segs] == [0, 1, 2, 3, 0]  # stem and a branch, 3 branches, merge
    stem = graph.operators[0].outputs[0]
    assert all(s.inputs == (stem,) for s in segs[1:4])
    assert segs[-1].outputs == graph.outputs
    for s in segs:  # each sub-model is a valid model file, byte for byte its constants
        again = import_model(write_model(s.graph))
        assert [t.data for t in again.tensors] == [t.data for t in s.graph.tensors]
