"""Writes examples/lcp_k4_int8.tflite: an LCP-style int8 network (mcugen's own writer, random
weights) for partitioning over several boards (docs/partitioning.md, issue 16).

LCP (Hadidi et al., "Toward Collaborative Inferencing of Deep Neural Networks on Internet of
Things Devices", IEEE IoT Journal 2020) splits a network into narrow branches that exchange
nothing until the end. Here: a shared stem (a 3x3 convolution at stride 2 down to few channels,
so the tensor every branch reads is small), K branches at the stem's resolution (a 3x3
convolution widening to `width` channels, a depthwise-separable block, `depth` 3x3
convolutions, a global average pool: the branch's output is `width` bytes), and the merge (a
concatenation of the pooled branches, then a classifier).
Run: python examples/make_lcp_net.py [--branches 4] [--width 24] [--depth 3] [--size 32]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcugen.model.ir import Graph
from mcugen.model.tflite_write import write_model
from testgraphs import VALID, _Net  # the converter-like int8 builder of the test graphs


def lcp_net(
    branches: int = 4,
    *,
    width: int = 24,
    depth: int = 3,
    size: int = 32,
    stem_channels: int = 2,
    classes: int = 10,
    seed: int = 16,
) -> Graph:
    """The network of the module docstring, deterministic for its arguments."""
    net = _Net(seed, f"lcp_k{branches}")
    stem = net.conv(net.image(size, 3), stem_channels, 3, 2, relu=True)
    shared = net.new_quant(0.05, relu=True)  # CONCATENATION needs one quantization
    pooled = []
    for _ in range(branches):
        y = net.conv(stem, width, 3, relu=True)
        y = net.sep_conv(y, width, 3, relu=True)
        for k in range(depth):
            y = net.conv(y, width, 3, relu=True, quant=shared if k == depth - 1 else None)
        pooled.append(net.pool(y, "avg", padding=VALID))
    merged = net.concat(pooled) if branches > 1 else pooled[0]
    return net.finish(net.classifier(merged, classes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=4)
    parser.add_argument("--width", type=int, default=24)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--stem-channels", type=int, default=2)
    parser.add_argument("-o", "--output", type=Path, default=None)
    args = parser.parse_args()
    graph = lcp_net(
        args.branches,
        width=args.width,
        depth=args.depth,
        size=args.size,
        stem_channels=args.stem_channels,
    )
    out = args.output or Path(__file__).resolve().parent / f"lcp_k{args.branches}_int8.tflite"
    out.write_bytes(write_model(graph))
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
