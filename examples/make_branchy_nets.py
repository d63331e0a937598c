"""Writes examples/<kind>_int8.tflite: branchy int8 networks (mcugen's own writer, random weights,
converter-like quantization) for partitioning over several boards (docs/partitioning.md, issue 16).

Kinds:
- `inception`: a stem and two Inception modules (1x1 | 1x1-3x3 | 1x1-3x3-3x3, the 5x5 as two 3x3 |
  3x3 max pool-1x1, concatenated; Szegedy et al. 2015), a classifier (testgraphs).
- `two_tower`: two input images, each with its own tower (a 3x3 convolution, a 3x3 max pool),
  cross-connected in the middle (each tower adds the other's global average, a C-byte summary,
  broadcast over its map), then a 1x1 convolution and a classifier head per tower: two outputs.
  `--size 64 --width 48 --stride 1` gives a model one NUCLEO-F767ZI cannot hold (a tower's pooled
  map waits for the other tower's summary: three 196,608-byte maps live at once on one board, in
  any order) but two can (one tower each, at most two maps and an input live).
- `nas_cells`: a stem, two DARTS-like normal cells (four nodes, each the sum of two operations on
  earlier nodes, skip edges among them; Liu et al. 2019), a classifier (testgraphs).
Run: python examples/make_branchy_nets.py --kind KIND [--size N] [--width C] [--stride S] [-o F]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcugen.model.ir import Graph
from mcugen.model.tflite_write import write_model
from testgraphs import VALID, _Net, inception, nas_cells

KINDS = ("inception", "two_tower", "nas_cells")


def two_tower(size: int = 32, width: int = 16, stride: int = 2, *, seed: int = 16) -> Graph:
    """The two-input, two-output network of the module docstring."""
    net = _Net(seed, f"two_tower_{size}_{width}")
    images = [net.image(size, 3), net.image(size, 3)]
    maps = [net.pool(net.conv(x, width, 3, stride, relu=True), "max", 3) for x in images]
    summaries = [net.pool(m, "avg", padding=VALID) for m in maps]
    crossed = [net.add(m, s) for m, s in zip(maps, reversed(summaries), strict=True)]
    heads = [net.conv(c, width, 1, relu=True) for c in crossed]
    return net.finish(net.classifier(heads[0], 10), net.classifier(heads[1], 4))


def branchy_net(
    kind: str, size: int | None = None, width: int | None = None, stride: int = 2
) -> Graph:
    if kind == "inception":
        return inception(16, blocks=2, channels=width or 8, hw=size or 32)
    if kind == "nas_cells":  # seed 4: skip edges in the cell (graphs.random_genotype)
        return nas_cells(4, cells=2, channels=width or 8, hw=size or 16)
    return two_tower(size or 32, width or 16, stride)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, required=True)
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--width", type=int, default=None)
    parser.add_argument("--stride", type=int, default=2)
    parser.add_argument("-o", "--output", type=Path, default=None)
    args = parser.parse_args()
    graph = branchy_net(args.kind, args.size, args.width, args.stride)
    out = args.output or Path(__file__).resolve().parent / f"{args.kind}_int8.tflite"
    out.write_bytes(write_model(graph))
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
