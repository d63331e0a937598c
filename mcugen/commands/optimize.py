"""`mcugen optimize`: rewrite a model so that stock TFLM runs it in mcugen's smaller arena.

The output stores the operators in mcugen's order and carries mcugen's arena offsets as TFLM's
`OfflineMemoryAllocation` metadata (`plan.offline.optimize_model`; the format, how TFLM uses it
and the kernel scratch it reserves are described there). The shared planning flags --no-inplace
and --no-rewrite change nothing here: the output never shares storage (beyond --reshape-views)
and is never rewritten (the portable rewrites gained nothing on the shared models).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from mcugen.commands._options import model_options
from mcugen.errors import UnsupportedError
from mcugen.model import numerics
from mcugen.model.ir import Graph
from mcugen.model.load import is_onnx, load_model, read_model_file, reference_flatbuffer
from mcugen.outputs import write_file
from mcugen.plan.memory_plan import plan_memory
from mcugen.plan.offline import optimize_model
from mcugen.plan.tflm_scratch import tflm_scratch_bytes

HELP = "write the model in mcugen's order with its offsets for stock TFLM"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (("output", "file"),)


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p, board=False, allocator=False)
    p.add_argument("-o", "--output", type=Path, required=True, help="the optimized .tflite")
    p.add_argument(
        "--reshape-views",
        action="store_true",
        help="let RESHAPE outputs share their input's memory (TFLM's RESHAPE skips the copy)",
    )
    p.add_argument(
        "--measure", action="store_true", help="measure TFLM's head before and after (tflite_micro)"
    )


def cmd_optimize(args: argparse.Namespace) -> int:
    graph = _tflm_graph(args)
    tflm = getattr(args, "tflm_plan", False)
    data, plan = optimize_model(
        graph,
        order="stored" if tflm else args.order,
        layout="greedy_by_size" if tflm else args.layout,
        reshape_views=args.reshape_views,
        time_budget=getattr(args, "time_budget", None),
    )
    baseline = plan_memory(
        graph, order="stored", layout="greedy_by_size", scratch=tflm_scratch_bytes(graph)
    )
    write_file(args.output, data)
    moved = sum(1 for pos, op in enumerate(plan.order) if pos != op)
    print(
        f"mcugen: wrote {args.output}: {len(plan.order)} operators ({moved} moved, order "
        f"{plan.order_strategy}), offline offsets for {len(plan.tensor_offsets())} tensors "
        f"(layout {plan.layout_strategy})"
    )
    print(
        f"  arena {plan.arena_bytes} bytes with TFLM's kernel scratch (peak live bytes of this "
        f"order {plan.lower_bound}); TFLM's own plan of the original: {baseline.arena_bytes} bytes"
    )
    if args.measure:
        from mcugen.reference import tflm_arena_head

        with tempfile.TemporaryDirectory(prefix="mcugen-optimize-") as tmp:
            original = Path(tmp) / "original.tflite"  # an ONNX model's imported graph as TFLite
            original.write_bytes(reference_flatbuffer(args.model))
            before = tflm_arena_head(original)
        after = tflm_arena_head(args.output)
        print(f"  measured with tflite_micro: head {before} -> {after} bytes")
    return 0


def _tflm_graph(args: argparse.Namespace) -> Graph:
    """The model for stock TFLM: an ONNX model with TFLite's numerics (TFLM computes no other);
    `--onnx-numerics ort` is refused in one line."""
    if getattr(args, "onnx_numerics", None) == numerics.ORT:
        raise UnsupportedError(
            "mcugen optimize writes a .tflite for TFLM, which computes TFLite's numerics",
            where=str(args.model),
            hint="drop --onnx-numerics (an ONNX model is then imported with fixed)",
        )
    onnx = is_onnx(args.model, read_model_file(args.model)[:8])
    return load_model(args.model, numerics=numerics.FIXED if onnx else None)
