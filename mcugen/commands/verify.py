"""`mcugen verify`: the device's outputs against TFLM's interpreter (onnxruntime for an ONNX model
with `--onnx-numerics ort`, the default); exit 1 on a mismatch."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from mcugen.commands._common import (
    generate_for,
    inputs_for,
    load_for,
    read_sample,
    require_location,
    target_for,
)
from mcugen.commands._options import device_options, model_options, positive, quantize_input_option
from mcugen.errors import McugenError
from mcugen.link.verify import verify
from mcugen.model.ir import Graph

HELP = "compare device outputs with TFLM's interpreter (an ONNX model: onnxruntime)"


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p)
    device_options(p)
    p.add_argument(
        "--samples", type=positive, default=5, help="seeded random inputs to compare (1 or more)"
    )
    p.add_argument(
        "--input", type=Path, default=None, help="compare on this sample (.npy, or .npz)"
    )
    p.add_argument(
        "--input-dir",
        type=Path,
        default=None,
        help="compare on every sample in this folder (*.npy or *.npz, one sample a file)",
    )
    quantize_input_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def cmd_verify(args: argparse.Namespace) -> int:
    target = target_for(args)
    require_location(target, args.port)
    samples = verify_samples(args, load_for(args))
    gen = generate_for(args, target)
    report = verify(gen, target, samples, port=args.port)
    print(json.dumps(report.as_json()) if args.json else report.text())
    return 0 if report.ok else 1


def verify_samples(args: argparse.Namespace, graph: Graph) -> list[list[np.ndarray]]:
    """`--input-dir`'s files (sorted by name, each checked as `--input` is), else `--input`,
    else `--samples` seeded random inputs."""
    if args.input_dir is None:
        return inputs_for(args, graph, args.samples)
    if args.input is not None:
        raise McugenError("--input and --input-dir conflict", hint="give one of them")
    folder = Path(args.input_dir)
    if not folder.is_dir():
        raise McugenError("not a folder", where=str(folder), hint="give a folder of .npy files")
    files = sorted(p for p in folder.iterdir() if p.suffix in (".npy", ".npz") and p.is_file())
    if not files:
        raise McugenError(
            "no .npy or .npz file in the folder", where=str(folder), hint="one sample a file"
        )
    return [read_sample(args, path, graph) for path in files]
