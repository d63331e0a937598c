"""RandWire (Xie et al. 2019): random graphs made DAGs by node index, a ReLU-SepConv per node."""

from __future__ import annotations

import numpy as np

from mcugen.model.ir import Graph
from testgraphs.net import _Net


def random_dag_edges(
    nodes: int, rng: np.random.Generator, kind: str, k: int, p: float
) -> set[tuple[int, int]]:
    """Undirected random graph edges (i < j): Watts-Strogatz ring lattice of degree k rewired
    with probability p ("ws"), or Erdos-Renyi with edge probability p ("er")."""
    if kind == "er":
        return {(i, j) for i in range(nodes) for j in range(i + 1, nodes) if rng.random() < p}
    edges = {
        (min(i, (i + d) % nodes), max(i, (i + d) % nodes))
        for i in range(nodes)
        for d in range(1, k // 2 + 1)
    }
    for i in range(nodes):
        for d in range(1, k // 2 + 1):
            j = (i + d) % nodes
            edge = (min(i, j), max(i, j))
            if edge in edges and rng.random() < p:
                free = [m for m in range(nodes) if m != i and (min(i, m), max(i, m)) not in edges]
                if free:
                    m = int(free[int(rng.integers(len(free)))])
                    edges.discard(edge)
                    edges.add((min(i, m), max(i, m)))
    return edges


def randwire(
    seed: int = 0,
    *,
    nodes: int = 32,
    stages: int = 1,
    channels: int = 16,
    hw: int = 32,
    kind: str = "ws",
    k: int = 4,
    p: float = 0.75,
    classes: int = 10,
) -> Graph:
    """A stem conv, `stages` random-wired stages (the first at stride 1, the others halve the
    resolution and double the channels), a classifier. About (edges + 2 nodes) ops per stage."""
    net = _Net(seed, f"randwire_{kind}{nodes}_{seed}")
    x = net.conv(net.image(hw, 3), channels, 3, 2, relu=True)
    for stage in range(stages):
        x = _randwire_stage(net, x, nodes, channels << stage, 1 if stage == 0 else 2, kind, k, p)
    return net.finish(net.classifier(x, classes))


def _randwire_stage(
    net: _Net, x: int, nodes: int, c: int, stride: int, kind: str, k: int, p: float
) -> int:
    edges = random_dag_edges(nodes, net.rng, kind, k, p)
    preds = {j: sorted(i for i, jj in edges if jj == j) for j in range(nodes)}
    has_successor = {i for i, _ in edges}
    relu_of_input: list[int] = []
    out: dict[int, int] = {}
    for j in range(nodes):
        if preds[j]:
            activated, s = net.relu(net.add_all([out[i] for i in preds[j]])), 1
        else:
            relu_of_input = relu_of_input or [net.relu(x)]  # one ReLU shared by input nodes
            activated, s = relu_of_input[0], stride
        out[j] = net.sep_conv(activated, c, 3, s)
    return net.add_all([out[j] for j in range(nodes) if j not in has_successor])
