"""`mcugen optimize`: stock TFLM runs the rewritten model bit-exactly in mcugen's smaller arena."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.link.host_run import random_inputs
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model, load_model
from mcugen.model.tflite_write import write_model
from mcugen.plan.buffers import activation_buffers
from mcugen.plan.compare import best_run, compare_strategies
from mcugen.plan.layout.greedy import greedy_by_size
from mcugen.plan.memory_plan import MemoryPlan, PlanInvalid, plan_memory
from mcugen.plan.offline import (
    OFFLINE_METADATA,
    check_offline_offsets,
    decode_offline_allocation,
    encode_offline_allocation,
    optimize_model,
    reorder_operators,
    reshape_view_aliases,
    with_offline_plan,
)
from mcugen.plan.tflm_scratch import tflm_scratch_bytes
from mcugen.reference import tflm_outputs
from support import SHARED_MODELS, tflm_arena_head
from testgraphs import inception, randwire

VWW = SHARED_MODELS / "mlperf_vww_mbv1_int8.tflite"
#: Models stock TFLM cannot run (hybrid: "Hybrid models are not supported").
TFLM_REJECTS = {"mlperf_kws_dscnn_hybrid"}
SHARED = (
    [p for p in sorted(SHARED_MODELS.glob("*.tflite")) if p.stem not in TFLM_REJECTS]
    if SHARED_MODELS.is_dir()
    else []
)


def assert_same_outputs(original: bytes, optimized: bytes, samples: int = 3) -> None:
    g0, g1 = import_model(original), import_model(optimized)
    inputs = [random_inputs(g0, seed) for seed in range(samples)]
    ours, theirs = tflm_outputs(original, g0, inputs), tflm_outputs(optimized, g1, inputs)
    for a, b in zip(ours, theirs, strict=True):
        for x, y in zip(a, b, strict=True):
            assert x.dtype == y.dtype and np.array_equal(x, y)


def plan_for_order(graph: Graph, order: tuple[int, ...], aliases=None) -> MemoryPlan:
    """A plan for an explicit order with TFLM's own layout (greedy by size)."""
    buffers = activation_buffers(graph, order, aliases=aliases)
    offsets = greedy_by_size(buffers)
    plan = MemoryPlan(order, buffers, MappingProxyType(offsets), "explicit", "greedy_by_size")
    plan.validate(graph)
    return plan


def breadth_first_order(graph: Graph) -> tuple[int, ...]:
    """Kahn's algorithm with a FIFO queue: operators level by level, as some converters emit."""
    producers, consumers = graph.producers(), graph.consumers()
    waiting = {
        op.index: len({producers[t] for t in op.inputs if t in producers}) for op in graph.operators
    }
    queue = deque(i for i, n in sorted(waiting.items()) if n == 0)
    order: list[int] = []
    while queue:
        i = queue.popleft()
        order.append(i)
        after = sorted({c for t in graph.operators[i].outputs for c in consumers.get(t, [])})
        for c in after:
            waiting[c] -= 1
            if waiting[c] == 0:
                queue.append(c)
    return tuple(order)


def test_metadata_format_matches_tflm_and_vela() -> None:
    data = encode_offline_allocation([0, -1, 48, 16])
    assert np.frombuffer(data, "<i4").tolist() == [0, 1, 4, 0, -1, 48, 16]
    assert decode_offline_allocation(data) == (0, -1, 48, 16)
    with pytest.raises(Exception, match="announces"):
        decode_offline_allocation(np.asarray([0, 1, 5, 0], "<i4").tobytes())


def test_reorder_keeps_tensors_and_renumbers_operators() -> None:
    graph = randwire(1, nodes=8)
    order = breadth_first_order(graph)
    moved = reorder_operators(graph, order)
    assert moved.tensors == graph.tensors
    assert [op.index for op in moved.operators] == list(range(len(order)))
    assert [op.outputs for op in moved.operators] == [graph.operators[i].outputs for i in order]
    with pytest.raises(PlanInvalid):
        reorder_operators(graph, order[1:])


def test_offsets_are_checked_under_tflm_lifetimes() -> None:
    graph = inception(1, blocks=2)
    plan = plan_for_order(graph, tuple(range(len(graph.operators))))
    rewritten = with_offline_plan(graph, plan)
    offsets = decode_offline_allocation(rewritten.metadata[OFFLINE_METADATA])
    assert len(offsets) == len(graph.tensors)
    assert all(offsets[t.index] == -1 for t in graph.tensors if t.is_constant)
    check_offline_offsets(rewritten, offsets)
    clash = list(offsets)
    clash[graph.operators[0].outputs[0]] = offsets[graph.inputs[0]]  # input still read there
    with pytest.raises(PlanInvalid, match="overlap"):
        check_offline_offsets(rewritten, clash)
    clash[graph.inputs[0]] = 8
    with pytest.raises(PlanInvalid, match="multiple of 16"):
        check_offline_offsets(rewritten, clash)


def test_bad_stored_order_fixed_for_stock_tflm(tmp_path: Path) -> None:
    """Inception blocks stored branch by branch (the generation order) need more than running
    them level by level: the 1x1 reductions first, so the block input dies early."""
    graph = inception(1, blocks=4)
    src = tmp_path / "inception.tflite"
    src.write_bytes(write_model(graph))
    plan = plan_for_order(graph, breadth_first_order(graph))
    out = tmp_path / "opt.tflite"
    out.write_bytes(write_model(with_offline_plan(graph, plan)))
    before, after = tflm_arena_head(src), tflm_arena_head(out)
    assert after == plan.arena_bytes < before
    assert_same_outputs(src.read_bytes(), out.read_bytes())


def assert_best_pair_shrinks_tflm(src: Path, graph: Graph, out: Path, skip: str) -> None:
    """`mcugen optimize` with the best registered order and layout: stock TFLM's arena is what
    the plan says and smaller than before (else skip with `skip`), outputs the same."""
    best = best_run(compare_strategies(graph))
    assert best is not None
    args = ["optimize", str(src), "-o", str(out), "--order", best.order, "--layout", best.layout]
    assert main(args) == 0
    before, after = tflm_arena_head(src), tflm_arena_head(out)
    assert after == best.arena_bytes <= before
    if best.arena_bytes == before:
        pytest.skip(skip)
    assert after < before
    assert_same_outputs(src.read_bytes(), out.read_bytes())


def test_cli_best_registered_pair_on_randwire(tmp_path: Path) -> None:
    graph = randwire(1, nodes=12)
    src = tmp_path / "randwire.tflite"
    src.write_bytes(write_model(graph))
    skip = "no registered strategy beats TFLM's plan of this graph yet"
    assert_best_pair_shrinks_tflm(src, graph, tmp_path / "randwire_opt.tflite", skip)


@pytest.mark.skipif(not VWW.is_file(), reason="../shared/models not present")
def test_vww_int8_needs_a_smaller_arena_in_stock_tflm(tmp_path: Path) -> None:
    skip = "no registered layout beats TFLM's greedy by size on VWW yet"
    assert tflm_arena_head(VWW) == 73728
    assert_best_pair_shrinks_tflm(VWW, load_model(VWW), tmp_path / "vww_opt.tflite", skip)


def test_reshape_views_shrink_and_stay_exact(tmp_path: Path) -> None:
    graph = randwire(2, nodes=6, channels=4, hw=8)
    assert reshape_view_aliases(graph), "the classifier has a RESHAPE"
    plain, _ = optimize_model(graph, order="stored", layout="greedy_by_size")
    views, plan = optimize_model(graph, order="stored", layout="greedy_by_size", reshape_views=True)
    offsets = decode_offline_allocation(import_model(views).metadata[OFFLINE_METADATA])
    reshape = next(op for op in graph.operators if op.opcode == "RESHAPE")
    assert offsets[reshape.inputs[0]] == offsets[reshape.outputs[0]]
    paths = [tmp_path / "plain.tflite", tmp_path / "views.tflite"]
    for path, data in zip(paths, (plain, views), strict=True):
        path.write_bytes(data)
    assert tflm_arena_head(paths[1]) == plan.arena_bytes <= tflm_arena_head(paths[0])
    assert_same_outputs(write_model(graph), views)
    with pytest.raises(PlanInvalid, match="overlap"):
        with_offline_plan(graph, plan)  # views are rejected unless asked for


def test_cli_errors_leave_no_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model at all, just some bytes")
    out = tmp_path / "out.tflite"
    assert main(["optimize", str(bad), "-o", str(out)]) == 2
    assert "bad.tflite" in capsys.readouterr().err
    good = tmp_path / "good.tflite"
    good.write_bytes(write_model(randwire(1, nodes=6, channels=4, hw=8)))
    assert main(["optimize", str(good), "-o", str(tmp_path / "missing" / "o.tflite")]) == 2
    assert "output directory does not exist" in capsys.readouterr().err
    assert main(["optimize", str(good), "-o", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".mcugen-outputs",
        "bad.tflite",
        "good.tflite",
        "out.tflite",
    ]


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.stem)
def test_tflm_scratch_table_predicts_tflm_head(path: Path) -> None:
    """TFLM's own plan (stored order, greedy by size) with the scratch its kernels request is
    exactly TFLM's measured head: the table of kernel scratch is complete for these models."""
    graph = load_model(path)
    plan = plan_memory(
        graph, order="stored", layout="greedy_by_size", scratch=tflm_scratch_bytes(graph)
    )
    assert plan.arena_bytes == tflm_arena_head(path)


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.stem)
def test_optimized_real_model_never_needs_more(path: Path, tmp_path: Path) -> None:
    """Best registered pair, planned with TFLM's kernel scratch reserved: stock TFLM's head is
    mcugen's arena, never above the original's, and the outputs are bit-exact."""
    graph = load_model(path)
    best = best_run(compare_strategies(graph, scratch=tflm_scratch_bytes(graph)))
    assert best is not None
    data, plan = optimize_model(graph, order=best.order, layout=best.layout)
    out = tmp_path / "opt.tflite"
    out.write_bytes(data)
    assert tflm_arena_head(out) == plan.arena_bytes <= tflm_arena_head(path)
    assert_same_outputs(path.read_bytes(), data, samples=1)
