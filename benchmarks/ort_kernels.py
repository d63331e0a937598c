"""`--onnx-numerics ort`'s optimised kernels (mcugen/codegen/lower/ort_opt.py) on a board's QEMU
twin (default nucleo-f767, Cortex-M7, `-icount shift=0`): per test network of
tests/support/onnx_models.py (quantized by onnxruntime: activations int8 or uint8, weights per
tensor or per channel), instructions per inference of ort with the reference kernels, ort with
the optimised ones (`--kernels opt`) and fixed (TFLite's requantisation) with the optimised
ones, and each build's code (.text + vectors). Every ort run's outputs must equal onnxruntime's
on every element (else the script exits 1). A second table splits ort opt's instructions by the
kernel each operator got, with
instructions per MAC where it has MACs.
`--twin` prints instead the ResNet against its TFLite twin (tests/support/onnx_twin.py: the
same network written as TFLite from the ONNX file's weights and quantization), all three at the
default kernels (`--kernels auto`): the issue's "within 5 % of the same instructions".
Run: PYTHONPATH=.:tests python benchmarks/ort_kernels.py [--board B] [--samples N] [--quick]
[--twin] [NET...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.firmware.sizes import firmware_sizes
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.model.load import load_model
from mcugen.model.macs import operator_macs
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from mcugen.reference import onnxruntime_outputs
from support.onnx_models import onnx_samples, quantized

NETS = ("ds_cnn", "mobilenet", "resnet")
QUANTS = (("int8", False), ("int8", True), ("uint8", False), ("uint8", True))
RUNS = (("ort", "reference"), ("ort", "opt"), ("fixed", "opt"))


def measure(
    path: Path, numerics: str | None, kernels: str, board: str, samples: int, work: Path
) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """(instructions, code bytes, (instructions, MACs) by kernel) of one build (numerics None:
    a .tflite model); ort outputs checked."""
    target = resolve_target(load_board(board), emulate=True)
    graph = load_model(path, numerics=numerics)
    if numerics is None:  # a TFLite twin: seeded random inputs
        ours_in = [random_inputs(graph, seed) for seed in range(samples)]
    else:
        ours_in, _ = onnx_samples(graph, samples, seed=3)
    options = PlanOptions(kernels=kernels, core=target.port_board.core, onnx_numerics=numerics)
    gen = generate(graph, options=options)
    result = build(gen, target, work / f"{path.name}-{numerics}-{kernels}")
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, ours_in, emulated=True)
        profiled = run_samples(link, gen.graph, ours_in[:1], emulated=True, profile=True)
    if numerics == "ort":
        ref = onnxruntime_outputs(path, graph, ours_in)
        for ours, theirs in zip(run.outputs, ref, strict=True):
            if not np.array_equal(ours[0], theirs[0].reshape(ours[0].shape)):
                sys.exit(f"{path.stem} {kernels}: outputs differ from onnxruntime's")
    by_kernel: dict[str, tuple[int, int]] = {}
    for step, ticks in enumerate(profiled.node_ticks):
        op = gen.graph.operators[gen.plan.order[step]]
        low = gen.lowered[op.index]
        name = low.variant if low.variant != "reference" else f"reference {op.opcode}"
        count, macs = by_kernel.get(name, (0, 0))
        by_kernel[name] = (count + run.instructions(ticks), macs + operator_macs(gen.graph, op))
    count = max(run.instructions(t) for t in run.ticks_per_inference)
    return count, firmware_sizes(result.executable, target).code, by_kernel


def twin_table(board: str, samples: int, quick: bool, work: Path) -> None:
    """The ResNet's ONNX import (fixed, ort) against its TFLite twin, default kernels."""
    from support.onnx_twin import resnet_twin

    print("| act | weights | TFLite twin | ONNX fixed | ONNX ort | fixed / twin | ort / twin |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for act, pc in QUANTS[1:2] if quick else QUANTS:
        path, _ = quantized("resnet", work, per_channel=pc, activations=act)
        twin = path.with_suffix(".twin.tflite")
        twin.write_bytes(resnet_twin(path))
        tflite = measure(twin, None, "auto", board, samples, work)[0]
        fixed, ort = (measure(path, n, "auto", board, samples, work)[0] for n in ("fixed", "ort"))
        weights = "per channel" if pc else "per tensor"
        print(
            f"| {act} | {weights} | {tflite:,} | {fixed:,} | {ort:,} | "
            f"{fixed / tflite - 1:+.1%} | {ort / tflite - 1:+.1%} |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nets", nargs="*", default=list(NETS))
    parser.add_argument("--board", default="nucleo-f767")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="int8 per channel only")
    parser.add_argument("--twin", action="store_true", help="the ResNet against its TFLite twin")
    args = parser.parse_args(argv)
    if args.twin:
        with tempfile.TemporaryDirectory(prefix="mcugen-ort-") as tmp:
            twin_table(args.board, args.samples, args.quick, Path(tmp))
        return
    print(
        "| network | act | weights | ort reference | ort opt | speed-up | fixed opt | "
        "code ort ref / ort opt / fixed opt |"
    )
    print("|---|---|---|---:|---:|---:|---:|---|")
    splits: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mcugen-ort-") as tmp:
        work = Path(tmp)
        for net in args.nets:
            for act, pc in QUANTS[1:2] if args.quick else QUANTS:
                path, _ = quantized(net, work, per_channel=pc, activations=act)
                found = {
                    run: measure(path, run[0], run[1], args.board, args.samples, work)
                    for run in RUNS
                }
                (ref, ref_code, _), (opt, opt_code, split), (fixed, fixed_code, _) = (
                    found[r] for r in RUNS
                )
                weights = "per channel" if pc else "per tensor"
                print(
                    f"| {net} | {act} | {weights} | {ref:,} | {opt:,} | {ref / opt:.2f} | "
                    f"{fixed:,} | {ref_code:,} / {opt_code:,} / {fixed_code:,} |",
                    flush=True,
                )
                parts = ", ".join(
                    f"{k} {n:,}" + (f" ({n / m:.2f}/MAC)" if m else "")
                    for k, (n, m) in sorted(split.items(), key=lambda i: -i[1][0])
                )
                splits.append(f"| {net} {act} {weights} | {parts} |")
    print("\n| ort opt | instructions by kernel |\n|---|---|")
    print("\n".join(splits))


if __name__ == "__main__":
    main()
