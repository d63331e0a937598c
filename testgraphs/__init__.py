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

import math
from collections.abc import Callable, Sequence

import numpy as np

from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph

Quant = tuple[float, int]
SAME, VALID = 0, 1
RELU_ACT = 1
_SPREAD = 73.0  # std of uniform int8 weights: keeps activation spreads level through a conv


class _Net:
    """A GraphBuilder that tracks shapes and invents converter-like weights and quantization."""

    def __init__(self, seed: int, name: str) -> None:
        self.b = GraphBuilder(name)
        self.rng = np.random.default_rng(seed)

    def shape(self, t: int) -> tuple[int, ...]:
        return self.b.tensors[t].shape

    def quant(self, t: int) -> Quant:
        q = self.b.tensors[t].quant
        assert q is not None
        return q.scale, q.zero_point

    def new_quant(self, scale: float, relu: bool = False) -> Quant:
        return float(scale), -128 if relu else int(self.rng.integers(-16, 17))

    def image(self, hw: int, channels: int) -> int:
        return self.b.input((1, hw, hw, channels), "int8", scale=1 / 128, zero_point=0)

    def _act(self, shape: Sequence[int], q: Quant) -> int:
        return self.b.activation(shape, "int8", scale=q[0], zero_point=q[1])

    def conv(
        self,
        x: int,
        out_c: int,
        k: int = 1,
        stride: int = 1,
        *,
        relu: bool = False,
        depthwise: bool = False,
        dilation: int = 1,
        quant: Quant | None = None,
    ) -> int:
        """CONV_2D or DEPTHWISE_CONV_2D (SAME padding); `quant` forces the output params."""
        _, h, w, c = self.shape(x)
        s_in, _ = self.quant(x)
        out_c = c if depthwise else out_c
        fan_in = k * k * (1 if depthwise else c)
        w_scales = self.rng.uniform(0.005, 0.015, out_c)
        w_shape = (1, k, k, out_c) if depthwise else (out_c, k, k, c)
        weights = self.rng.integers(-127, 128, w_shape, dtype=np.int8)
        wt = self.b.const(weights, scale=w_scales, zero_point=0, axis=3 if depthwise else 0)
        bias = self.rng.integers(-2000, 2001, out_c, dtype=np.int32)
        bt = self.b.const(bias, scale=s_in * w_scales)
        spread = s_in * float(w_scales.mean()) * _SPREAD * math.sqrt(fan_in)
        q = quant or self.new_quant(spread * (0.5 if relu else 1.0), relu)
        y = self._act((1, -(-h // stride), -(-w // stride), out_c), q)
        opts = {
            "padding": SAME,
            "stride_h": stride,
            "stride_w": stride,
            "dilation_h_factor": dilation,
            "dilation_w_factor": dilation,
            "fused_activation_function": RELU_ACT if relu else 0,
        }
        if depthwise:
            opts["depth_multiplier"] = 1
        self.b.op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, wt, bt], [y], **opts)
        return y

    def sep_conv(
        self,
        x: int,
        out_c: int,
        k: int = 3,
        stride: int = 1,
        *,
        dilation: int = 1,
        relu: bool = False,
    ) -> int:
        """Depthwise k x k (stride, dilation) then pointwise 1x1 (optionally fused ReLU)."""
        d = self.conv(x, 0, k, stride, depthwise=True, dilation=dilation)
        return self.conv(d, out_c, 1, relu=relu)

    def relu(self, x: int) -> int:
        s, _ = self.quant(x)
        y = self._act(self.shape(x), self.new_quant(s * 0.5, relu=True))
        self.b.op("RELU", [x], [y])
        return y

    def add(self, a: int, b: int, quant: Quant | None = None) -> int:
        q = quant or self.new_quant(math.hypot(self.quant(a)[0], self.quant(b)[0]))
        y = self._act(self.shape(a), q)
        self.b.op("ADD", [a, b], [y], fused_activation_function=0)
        return y

    def add_all(self, xs: Sequence[int]) -> int:
        """Sum of `xs` as a chain of ADDs (`xs[0]` itself if it is alone)."""
        total = xs[0]
        for x in xs[1:]:
            total = self.add(total, x)
        return total

    def concat(self, xs: Sequence[int]) -> int:
        """Channel concatenation; all inputs must share one quantization (TFLM's int8 rule)."""
        q = self.quant(xs[0])
        assert all(self.quant(x) == q for x in xs), "concatenation inputs need shared params"
        _, h, w, _ = self.shape(xs[0])
        y = self._act((1, h, w, sum(self.shape(x)[3] for x in xs)), q)
        self.b.op("CONCATENATION", list(xs), [y], axis=3, fused_activation_function=0)
        return y

    def pool(self, x: int, kind: str, k: int = 3, stride: int = 1, padding: int = SAME) -> int:
        _, h, w, c = self.shape(x)
        hw = (-(-h // stride), -(-w // stride)) if padding == SAME else (1, 1)
        y = self._act((1, *hw, c), self.quant(x))
        opcode = "MAX_POOL_2D" if kind == "max" else "AVERAGE_POOL_2D"
        self.b.op(
            opcode,
            [x],
            [y],
            padding=padding,
            stride_h=stride,
            stride_w=stride,
            filter_height=k if padding == SAME else h,
            filter_width=k if padding == SAME else w,
            fused_activation_function=0,
        )
        return y

    def upsample(self, x: int) -> int:
        _, h, w, c = self.shape(x)
        size = self.b.const(np.array([2 * h, 2 * w], np.int32))
        y = self._act((1, 2 * h, 2 * w, c), self.quant(x))
        self.b.op("RESIZE_NEAREST_NEIGHBOR", [x, size], [y], align_corners=False)
        return y

    def classifier(self, x: int, classes: int) -> int:
        """Global average pool, RESHAPE to (1, C), FULLY_CONNECTED."""
        pooled = self.pool(x, "avg", padding=VALID)
        c = self.shape(x)[3]
        flat = self._act((1, c), self.quant(pooled))
        self.b.op("RESHAPE", [pooled, self.b.const(np.array([1, c], np.int32))], [flat])
        s_in = self.quant(flat)[0]
        w_scale = 0.01
        wt = self.b.const(self.rng.integers(-127, 128, (classes, c), dtype=np.int8), scale=w_scale)
        bt = self.b.const(
            self.rng.integers(-500, 501, classes, dtype=np.int32), scale=s_in * w_scale
        )
        y = self._act((1, classes), self.new_quant(s_in * w_scale * _SPREAD * math.sqrt(c)))
        self.b.op("FULLY_CONNECTED", [flat, wt, bt], [y], fused_activation_function=0)
        return y

    def finish(self, *outputs: int) -> Graph:
        self.b.output(*outputs)
        return self.b.graph()


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


def unet(
    seed: int = 0, *, depth: int = 3, channels: int = 8, hw: int = 32, classes: int = 2
) -> Graph:
    """Encoder (two 3x3 convs, 2x2 max pool per level), bottleneck, decoder (x2 nearest
    upsample, 3x3 conv, CONCATENATION with the skip, two 3x3 convs), 1x1 conv to `classes`."""
    net = _Net(seed, f"unet{depth}_{seed}")
    x = net.image(hw, 3)
    skips = []
    for level in range(depth):
        c = channels << level
        x = net.conv(net.conv(x, c, 3, relu=True), c, 3, relu=True)
        skips.append(x)
        x = net.pool(x, "max", 2, 2)
    x = net.conv(net.conv(x, channels << depth, 3, relu=True), channels << depth, 3, relu=True)
    for level in reversed(range(depth)):
        c, skip = channels << level, skips[level]
        up = net.conv(net.upsample(x), c, 3, relu=True, quant=net.quant(skip))
        x = net.conv(net.conv(net.concat([skip, up]), c, 3, relu=True), c, 3, relu=True)
    return net.finish(net.conv(x, classes, 1))


def inception(
    seed: int = 0,
    *,
    blocks: int = 4,
    channels: int = 16,
    hw: int = 32,
    blocks_per_group: int = 2,
    classes: int = 10,
) -> Graph:
    """A stem (3x3 stride-2 conv), `blocks` Inception blocks with a 3x3 stride-2 max pool after
    every `blocks_per_group` (widths double there), a classifier. 9 ops per block."""
    net = _Net(seed, f"inception{blocks}_{seed}")
    x = net.conv(net.image(hw, 3), 2 * channels, 3, 2, relu=True)
    width = channels
    for i in range(blocks):
        if i and i % blocks_per_group == 0:
            x, width = net.pool(x, "max", 3, 2), 2 * width
        x = _inception_block(net, x, width)
    return net.finish(net.classifier(x, classes))


def _inception_block(net: _Net, x: int, width: int) -> int:
    """Branches 1x1 | 1x1-3x3 | 1x1-3x3-3x3 | maxpool-1x1, concatenated (Szegedy et al. 2015,
    the 5x5 factorised as in Inception-v3). Widths drawn around `width`."""

    def w(scale: float) -> int:
        return max(4, int(round(width * scale * net.rng.uniform(0.75, 1.25))))

    b1 = net.conv(x, w(1.0), 1, relu=True)
    q = net.quant(b1)
    b2 = net.conv(net.conv(x, w(0.75), 1, relu=True), w(1.0), 3, relu=True, quant=q)
    b3 = net.conv(net.conv(x, w(0.25), 1, relu=True), w(0.5), 3, relu=True)
    b3 = net.conv(b3, w(0.5), 3, relu=True, quant=q)
    b4 = net.conv(net.pool(x, "max", 3, 1), w(0.5), 1, relu=True, quant=q)
    return net.concat([b1, b2, b3, b4])


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
