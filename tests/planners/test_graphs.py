"""Generated irregular graphs: deterministic, sized as asked, valid for TFLM, exact in mcugen."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.link.host_run import random_inputs
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.reference import tflm_outputs
from support import assert_matches_tflm
from testgraphs import (
    GENERATORS,
    benchmark_suite,
    inception,
    nas_cells,
    random_dag_edges,
    randwire,
    unet,
)

SUITE = benchmark_suite()


def _is_topological(graph: Graph) -> bool:
    ready = set(graph.inputs) | {t.index for t in graph.tensors if t.is_constant}
    for op in graph.operators:
        if any(t >= 0 and t not in ready for t in op.inputs):
            return False
        ready.update(op.outputs)
    return True


@pytest.mark.parametrize(("name", "build"), SUITE, ids=[n for n, _ in SUITE])
def test_benchmark_graph_is_valid_and_deterministic(name: str, build) -> None:
    graph = build()
    data = write_model(graph)
    assert data == write_model(build()), "same seed, same bytes"
    assert 10 <= len(graph.operators) <= 310
    assert _is_topological(graph)
    imported = import_model(data, source=name)
    assert [op.opcode for op in imported.operators] == [op.opcode for op in graph.operators]
    assert all(graph.tensors[t].dtype == "int8" for t in graph.activation_tensors())


def test_suite_covers_the_families_and_sizes() -> None:
    counts = {name: len(build().operators) for name, build in SUITE}
    for family, least in (("randwire", 4), ("nas_cells", 4), ("unet", 2), ("inception", 2)):
        assert sum(1 for n in counts if n.startswith(family)) >= least
    randwire_sizes = [c for n, c in counts.items() if n.startswith("randwire")]
    assert min(randwire_sizes) >= 50 and max(randwire_sizes) >= 300
    assert len(benchmark_suite(quick=True)) == 4


def test_seed_and_size_parameters_change_the_graph() -> None:
    assert write_model(randwire(1, nodes=10)) != write_model(randwire(2, nodes=10))
    assert len(randwire(1, nodes=30).operators) > len(randwire(1, nodes=10).operators)
    assert len(nas_cells(1, cells=4).operators) > len(nas_cells(1, cells=2).operators)
    assert len(unet(1, depth=3).operators) > len(unet(1, depth=2).operators)
    assert len(inception(1, blocks=4).operators) > len(inception(1, blocks=2).operators)
    assert set(GENERATORS) == {"randwire", "nas_cells", "unet", "inception"}


@pytest.mark.parametrize("kind", ["ws", "er"])
def test_random_graph_edges_are_forward_and_seeded(kind: str) -> None:
    edges = random_dag_edges(20, np.random.default_rng(3), kind, 4, 0.3)
    assert edges == random_dag_edges(20, np.random.default_rng(3), kind, 4, 0.3)
    assert edges and all(0 <= i < j < 20 for i, j in edges)


def test_unet_skips_are_concatenated() -> None:
    graph = unet(0, depth=3)
    concats = [op for op in graph.operators if op.opcode == "CONCATENATION"]
    assert len(concats) == 3
    producers = graph.producers()
    for op in concats:  # the skip comes from the encoder, far earlier than the other input
        skip, up = op.inputs
        assert producers[skip] < producers[up] - 2


@pytest.mark.parametrize("name", ["randwire_ws12", "nas_cells3", "unet3", "inception4"])
def test_tflm_runs_generated_graph_with_varied_outputs(name: str) -> None:
    graph = dict(SUITE)[name]()
    out = tflm_outputs(write_model(graph), graph, [random_inputs(graph, 0)])[0][0]
    assert len(np.unique(out)) > 1


SMALL = {
    "randwire": lambda: randwire(5, nodes=6, channels=4, hw=8),
    "nas_cells": lambda: nas_cells(5, cells=3, channels=4, hw=8),
    "unet": lambda: unet(5, depth=2, channels=4, hw=8),
    "inception": lambda: inception(5, blocks=3, channels=4, hw=8),
}


@pytest.mark.parametrize("family", sorted(SMALL))
def test_small_generated_graph_bit_exact_in_mcugen(family: str) -> None:
    assert_matches_tflm(write_model(SMALL[family]()), samples=2)
