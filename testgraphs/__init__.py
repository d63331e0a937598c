"""Irregular int8 test graphs for the planners and benchmarks, built with `GraphBuilder` (not part
of the mcugen package: tests, benchmarks and examples import it from the source tree).

Families (sizes parametrised, deterministic for a seed, 10-300 operators):
- `randwire`: RandWire (Xie et al. 2019): a Watts-Strogatz or Erdos-Renyi random graph made a
  DAG by node index; a node sums its inputs (a chain of ADDs), then ReLU -> depthwise 3x3 ->
  pointwise 1x1 (the ReLU-SepConv of the paper; BN folded). Nodes without predecessors read the
  stage input, nodes without successors are summed into the stage output.
- `nas_cells`: DARTS/NASNet-like cells with a seeded random genotype: two cell inputs (ReLU +
  1x1 conv), four nodes each summing two ops from {sep/dil conv 3x3/5x5, max/avg pool, skip},
  the four nodes concatenated; reduction cells (stride 2, channels doubled) at 1/3 and 2/3.
- `unet`: U-Net: two 3x3 convs per level, max pool down, nearest-neighbour x2 up, skip
  connections by CONCATENATION.
- `inception`: stacks of Inception blocks: 1x1 / 1x1-3x3 / 1x1-3x3-3x3 / pool-1x1 branches
  concatenated, a max pool between groups of blocks.
All end with a classifier (global average pool, RESHAPE, FULLY_CONNECTED) except the U-Net.

Stored operator order: the generation order, i.e. node by node in node-id order and, inside a
node or block, branch by branch. This is the layer-creation order of an equivalent Keras model,
which is what a converter plausibly emits; no order was tuned to be bad (or good) for a planner.

Quantization is what a converter produces: per-channel int8 weights, int32 biases at scale
input x weight, output scales that keep activations in range, and shared input/output params
where TFLM's kernels require them (CONCATENATION inputs, pooling, RESIZE, RESHAPE).
"""

from __future__ import annotations

from collections.abc import Callable

from mcugen.model.ir import Graph
from testgraphs.convnets import inception, unet
from testgraphs.nas import NAS_OPS, Genotype, nas_cells, random_genotype
from testgraphs.net import RELU_ACT, SAME, VALID, Quant, _Net
from testgraphs.random_wiring import random_dag_edges, randwire

__all__ = [
    "GENERATORS",
    "NAS_OPS",
    "RELU_ACT",
    "SAME",
    "VALID",
    "Genotype",
    "Quant",
    "_Net",
    "benchmark_suite",
    "inception",
    "nas_cells",
    "random_dag_edges",
    "random_genotype",
    "randwire",
    "unet",
]


GENERATORS: dict[str, Callable[..., Graph]] = {
    "randwire": randwire,
    "nas_cells": nas_cells,
    "unet": unet,
    "inception": inception,
}


def benchmark_suite(quick: bool = False) -> list[tuple[str, Callable[[], Graph]]]:
    """The generated graphs of the planning benchmark, as (name, builder): 4 RandWire of about
    50-300 operators, 4 NAS cell stacks, 2 U-Nets, 2 Inception stacks (one of each with
    `quick`)."""
    full: list[tuple[str, Callable[[], Graph]]] = [
        ("randwire_ws12", lambda: randwire(1, nodes=12)),
        ("randwire_er24", lambda: randwire(2, nodes=24, kind="er", p=0.2)),
        ("randwire_ws2x20", lambda: randwire(3, nodes=20, stages=2)),
        ("randwire_ws72", lambda: randwire(6, nodes=72, channels=8)),
        ("nas_cells3", lambda: nas_cells(1, cells=3)),
        ("nas_cells5", lambda: nas_cells(2, cells=5)),
        ("nas_cells6_c16", lambda: nas_cells(3, cells=6, channels=16, hw=8)),
        ("nas_cells8", lambda: nas_cells(4, cells=8)),
        ("unet3", lambda: unet(1, depth=3)),
        ("unet4_64", lambda: unet(2, depth=4, hw=64, channels=4)),
        ("inception4", lambda: inception(1, blocks=4)),
        ("inception8", lambda: inception(2, blocks=8, blocks_per_group=3)),
    ]
    if not quick:
        return full
    return [full[0], full[4], full[8], full[10]]
