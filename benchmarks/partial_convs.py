"""Where issue 34's partial convolutions could pay in int8.

A convolution over a channel concatenation computed as one partial convolution per concatenated
input, the sums kept in an int32 accumulator and requantised once (SERENITY's rewriting, bit-exact
with the same int32 sums), frees each input once its partial sum is taken, but holds 4 bytes per
output element where an int8 tensor holds 1 (SERENITY's float graphs hold 4 and 4).

Per graph (the generated suite and memory_bar.py's held-out stand-ins, then the shared models
under 1 MB): the channel concatenations; those whose every reader is a CONV_2D (through at most
one element-wise operator, as NAS cells' ReLU, which would then run per input); among those, the
ones whose accumulators (4 bytes x the readers' output channels) are smaller than the
concatenation's bytes, and the most bytes one of them could free: an upper bound on what the
rewrite saves at that step, before counting what else is live there.

The converse split (a wide convolution's output channels in groups, each group through the
channel-separable operators after it, a depthwise convolution of multiplier 1, PAD and
element-wise ones, into a partial sum of the convolution that reads them): the chains
conv -> separable -> conv, and the most bytes the middle tensor exceeds the accumulator by.
Run: python benchmarks/partial_convs.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from mcugen.model.ir import Graph, element_size
from mcugen.model.tflite_import import load_model
from testgraphs import benchmark_suite

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_bar import HELD_OUT_LIKE, MAX_SHARED_BYTES, SHARED_MODELS  # noqa: E402

ELEMENTWISE = {"RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH", "LOGISTIC", "TANH", "QUANTIZE"}


def concat_rows(graph: Graph) -> tuple[int, int, int, int]:
    """(channel concatenations, all of whose readers are convolutions, where the accumulators
    are smaller, the most bytes one of those could free)."""
    read = graph.consumers()
    concats = qualifying = smaller = 0
    best = 0
    for op in graph.operators:
        if op.opcode != "CONCATENATION" or len(graph.tensors[op.outputs[0]].shape) != 4:
            continue
        if op.options.get("axis", -1) not in (-1, 3):
            continue
        concats += 1
        y = op.outputs[0]
        convs, ok = [], y not in graph.outputs
        for r in read.get(y, []):
            reader = graph.operators[r]
            if reader.opcode in ELEMENTWISE:
                nxt = read.get(reader.outputs[0], [])
                convs += [graph.operators[i] for i in nxt]
            else:
                convs.append(reader)
        ok = ok and bool(convs) and all(c.opcode == "CONV_2D" for c in convs)
        if not ok:
            continue
        qualifying += 1
        shape = graph.tensors[y].shape
        acc = 4 * sum(graph.tensors[c.outputs[0]].shape[3] for c in convs)
        held = shape[3] * element_size(graph.tensors[y].dtype)
        if acc < held:
            smaller += 1
            best = max(best, (held - acc) * shape[1] * shape[2])
    return concats, qualifying, smaller, best


def split_rows(graph: Graph) -> tuple[int, int]:
    """(conv -> separable ops -> conv chains, the most bytes their accumulators could free)."""
    read = graph.consumers()
    chains, best = 0, 0
    for op in graph.operators:
        if op.opcode != "CONV_2D":
            continue
        t = op.outputs[0]
        while len(read.get(t, [])) == 1:
            nxt = graph.operators[read[t][0]]
            separable = (
                nxt.opcode in ELEMENTWISE
                or nxt.opcode == "PAD"
                or (
                    nxt.opcode == "DEPTHWISE_CONV_2D"
                    and nxt.options.get("depth_multiplier", 1) == 1
                )
            )
            if nxt.opcode == "CONV_2D" and nxt.index != op.index and t != op.outputs[0]:
                chains += 1
                mid = graph.tensors[t].shape
                acc = 4 * graph.tensors[nxt.outputs[0]].shape[3]
                held = mid[3] * element_size(graph.tensors[t].dtype)
                best = max(best, (held - acc) * mid[1] * mid[2])
                break
            if not separable:
                break
            t = nxt.outputs[0]
    return chains, best


def main() -> int:
    todo: list[tuple[str, Callable[[], Graph]]] = list(benchmark_suite()) + HELD_OUT_LIKE
    if SHARED_MODELS.is_dir():
        for path in sorted(SHARED_MODELS.glob("*.tflite")):
            if path.stat().st_size < MAX_SHARED_BYTES:
                todo.append((path.stem, lambda p=path: load_model(p)))  # type: ignore[misc]
    print(
        "| graph | channel concatenations | read only by convolutions | accumulators smaller "
        "| most bytes freed | conv -> separable -> conv | most bytes freed |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, make in todo:
        try:
            graph = make()
        except Exception as exc:  # noqa: BLE001 - a model the importer refuses gets a row saying so
            print(f"| {name} | not loaded: {exc} | | | | | |")
            continue
        concats, qualifying, smaller, best = concat_rows(graph)
        chains, freed = split_rows(graph)
        print(f"| {name} | {concats} | {qualifying} | {smaller} | {best} | {chains} | {freed} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
