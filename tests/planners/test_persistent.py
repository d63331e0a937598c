"""The persistent state area (plan/persistent.py): variables packed apart from the arena, aligned,
never overlapping, counted by the plan, its report and the board-fit verdict."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import numpy as np
import pytest

from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.pipeline import generate
from mcugen.plan import dynamic
from mcugen.plan.fit import fit_of
from mcugen.plan.persistent import ALIGN, PersistentInvalid, persistent_layout, reset_byte
from mcugen.plan.target import MemoryTarget
from mcugen.report.text import plan_json, plan_text
from support import SHARED_MODELS, STATEFUL_MODELS


def two_svdfs() -> Graph:
    """Two float SVDFs in a chain; states of 5 x 3 x 2 and 7 x 2 x 1 floats (odd sizes)."""
    b = GraphBuilder()
    x = b.input((1, 4), "float32")
    for units, rank, memory in ((5, 2, 3), (7, 1, 2)):
        filters = units * rank
        wf = b.const(np.ones((filters, b.tensors[x].shape[1]), np.float32))
        wt = b.const(np.ones((filters, memory), np.float32))
        bias = b.const(np.zeros(units, np.float32))
        state = b.variable((1, filters * memory), "float32")
        y = b.activation((1, units), "float32")
        b.op("SVDF", [x, wf, wt, bias, state], [y], rank=rank, fused_activation_function=0)
        x = y
    b.output(x)
    return b.graph()


def test_variables_are_packed_aligned_outside_the_arena() -> None:
    graph = two_svdfs()
    layout = persistent_layout(graph)
    first, second = graph.variable_tensors()
    assert dict(layout.offsets) == {first: 0, second: 128}  # 120 bytes, then aligned to 16
    assert layout.bytes == 192 and layout.lower_bound == 120 + 56  # 184, rounded up to 16
    layout.validate(graph)
    plan = generate(graph).plan
    assert plan.persistent == layout
    in_arena = {t for b in plan.buffers for t, _ in b.tensor_placements()}
    assert not in_arena & {first, second}
    assert all(off % ALIGN == 0 for off in layout.offsets.values())


def test_validate_rejects_overlap_and_missing_variables() -> None:
    graph = two_svdfs()
    layout = persistent_layout(graph)
    first, second = graph.variable_tensors()
    overlapping = replace(layout, offsets=MappingProxyType({first: 0, second: 64}))
    with pytest.raises(PersistentInvalid, match="overlap"):
        overlapping.validate(graph)
    missing = replace(layout, offsets=MappingProxyType({first: 0}))
    with pytest.raises(PersistentInvalid, match="exactly the variables"):
        missing.validate(graph)


def test_reports_and_fit_count_the_state() -> None:
    graph = two_svdfs()
    plan = generate(graph).plan
    assert "persistent state 192 bytes outside the arena (2 variable tensors" in plan_text(
        graph, plan, "two_svdfs"
    )
    assert plan_json(graph, plan)["persistent_bytes"] == 192
    fit = fit_of(graph, plan, dynamic.STATIC, 0, MemoryTarget("b", 100_000, 100_000, 1024, 256))
    assert fit.state == 192 and fit.ram_need == plan.arena_bytes + 192 + 1024 + fit.runtime
    assert "state 192" in fit.summary() and fit.as_json()["state"] == 192


def test_reset_byte_is_tflms_memset_value() -> None:
    b = GraphBuilder()
    s8 = b.variable((4,), "int8", scale=0.1, zero_point=-50)
    s16 = b.variable((4,), "int16", scale=0.1, zero_point=7)
    f32 = b.variable((4,), "float32")
    graph = b.graph()
    assert [reset_byte(graph, t) for t in (s8, s16, f32)] == [206, 0, 0]


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
@pytest.mark.parametrize("name", STATEFUL_MODELS)
def test_shared_models_state_is_planned_apart(name: str) -> None:
    graph = load_model(SHARED_MODELS / f"{name}.tflite")
    plan = generate(graph).plan
    plan.validate(graph)
    sizes = [graph.tensors[t].nbytes for t in graph.variable_tensors()]
    assert plan.persistent.lower_bound == sum(sizes) > 0
    assert plan.persistent.bytes <= sum(-(-s // ALIGN) * ALIGN for s in sizes)
    in_arena = {t for b in plan.buffers for t, _ in b.tensor_placements()}
    assert not in_arena & set(graph.variable_tensors())
