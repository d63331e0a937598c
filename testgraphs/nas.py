"""DARTS/NASNet-like cell stacks with a seeded random genotype."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mcugen.model.ir import Graph
from testgraphs.net import Quant, _Net

#: DARTS's operation set ("none" left out: it removes an edge).
NAS_OPS = tuple(
    "sep_conv_3x3 sep_conv_5x5 dil_conv_3x3 dil_conv_5x5 max_pool_3x3 avg_pool_3x3 "
    "skip_connect".split()
)
Genotype = tuple[tuple[tuple[str, int], tuple[str, int]], ...]


def random_genotype(rng: np.random.Generator, nodes: int = 4) -> Genotype:
    """DARTS-style cell: node i sums two ops on two distinct earlier states (0, 1 = inputs)."""
    cell = []
    for i in range(nodes):
        a, b = (int(s) for s in rng.choice(i + 2, 2, replace=False))
        ops = [NAS_OPS[int(rng.integers(len(NAS_OPS)))] for _ in range(2)]
        cell.append(((ops[0], a), (ops[1], b)))
    return tuple(cell)


def nas_cells(
    seed: int = 0, *, cells: int = 5, channels: int = 8, hw: int = 16, classes: int = 10
) -> Graph:
    """A stem, `cells` DARTS-like cells (one normal and one reduction genotype drawn from the
    seed), a classifier. About 30 ops per cell."""
    net = _Net(seed, f"nas_cells{cells}_{seed}")
    normal, reduce = random_genotype(net.rng), random_genotype(net.rng)
    s0 = s1 = net.conv(net.image(hw, 3), 3 * channels, 3, relu=False)
    c, reduction_prev = channels, False
    reductions = {cells // 3, 2 * cells // 3} if cells >= 3 else set()
    for i in range(cells):
        reduction = i in reductions
        c = 2 * c if reduction else c
        cell = reduce if reduction else normal
        s0, s1 = s1, _nas_cell(net, s0, s1, c, cell, reduction, reduction_prev)
        reduction_prev = reduction
    return net.finish(net.classifier(s1, classes))


def _nas_cell(
    net: _Net, s0: int, s1: int, c: int, cell: Genotype, reduction: bool, reduction_prev: bool
) -> int:
    relu: dict[int, int] = {}

    def activated(t: int) -> int:
        relu.setdefault(t, net.relu(t))
        return relu[t]

    states = [
        net.conv(activated(s0), c, 1, 2 if reduction_prev else 1),
        net.conv(activated(s1), c, 1),
    ]
    shared: Quant | None = None  # the concatenated nodes share the first node's params
    for (op_a, in_a), (op_b, in_b) in cell:
        branches = [
            _nas_op(net, op, states[j], c, 2 if reduction and j < 2 else 1, activated)
            for op, j in ((op_a, in_a), (op_b, in_b))
        ]
        states.append(net.add(branches[0], branches[1], shared))
        shared = net.quant(states[-1])
    return net.concat(states[2:])


def _nas_op(net: _Net, op: str, x: int, c: int, stride: int, relu: Callable[[int], int]) -> int:
    """One DARTS edge operation; a strided skip is a 1x1 stride-2 conv (FactorizedReduce's role)."""
    if op.startswith("sep_conv"):
        k = int(op[-1])
        mid = net.sep_conv(relu(x), c, k, stride, relu=True)
        return net.sep_conv(mid, c, k, 1)
    if op.startswith("dil_conv"):
        return net.sep_conv(relu(x), c, int(op[-1]), stride, dilation=2)
    if op.endswith("pool_3x3"):
        return net.pool(x, op[:3], 3, stride)
    return x if stride == 1 else net.conv(relu(x), c, 1, stride)
