"""`mcugen run`: build, run once on the host, the board or its QEMU twin, print the outputs.

With a dynamic allocator under --emulate it also runs static offsets for the same order and
buffers and reports the instruction overhead of the moves.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from mcugen.boards import Target
from mcugen.commands._common import (
    allocator_figures,
    device_report,
    generate_for,
    inputs_for,
    load_for,
    print_device_figures,
    print_estimate,
    print_operator_table,
    require_location,
    target_for,
)
from mcugen.commands._estimate_mix import check_mix, mix_report
from mcugen.commands._options import (
    device_options,
    estimate_option,
    model_options,
    partition_options,
    quantize_input_option,
)
from mcugen.errors import McugenError, RunError
from mcugen.figures import host_report
from mcugen.firmware.compile import build
from mcugen.pipeline import Generated
from mcugen.plan import dynamic

HELP = "build, run on the board or its emulator, print outputs"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (("output", "file"),)


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p)
    device_options(p)
    p.add_argument("--input", type=Path, default=None, help=".npy (one input) or .npz")
    quantize_input_option(p)
    p.add_argument("--output", type=Path, default=None, help="write outputs (.npy or .npz)")
    p.add_argument("--profile", action="store_true", help="per-operator instructions or cycles")
    estimate_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    partition_options(p)


def cmd_run(args: argparse.Namespace) -> int:
    if getattr(args, "boards", None) is not None:
        from mcugen.commands._run_boards import cmd_run_boards

        return cmd_run_boards(args)
    if getattr(args, "partition", None) is not None:
        raise McugenError("--partition spreads the model over --boards", hint="add --boards")
    target = target_for(args)
    require_location(target, args.port)
    mix_board = check_mix(args, target)
    samples = inputs_for(args, load_for(args), 1)
    gen = generate_for(args, target)
    with tempfile.TemporaryDirectory(prefix="mcugen-") as tmp:
        result = build(gen, target, Path(tmp) / "project")
        if target.board.is_host:
            report = host_report(gen, result, samples)
        else:
            report = device_report(gen, target, result, samples, args.port, args.profile)
            if mix_board is not None:
                mix_report(gen, target, result.executable, samples[0], Path(tmp), mix_board, report)
            if gen.dynamic is not None and gen.dynamic.mode != dynamic.PAGED and target.emulate:
                # a paged plan has no static baseline: its arena is paged because it does not fit
                report.update(static_baseline(gen, target, Path(tmp), samples, report))
    report["source"] = str(args.input) if args.input else f"random input (seed {args.seed})"
    report.update({k: v for k, v in allocator_figures(gen).items() if k != "arena_bytes"})
    if args.output:
        from mcugen.io import save_outputs

        save_outputs(args.output, gen.graph, report.pop("_outputs"))
        report["outputs_file"] = str(args.output)
    else:
        report.pop("_outputs")
    if args.json:
        print(json.dumps(report))
    else:
        _print_run(args, target, report)
    return 0


def static_baseline(
    gen: Generated,
    target: Target,
    workdir: Path,
    samples: list[list[np.ndarray]],
    report: dict[str, Any],
) -> dict[str, Any]:
    """Run the same order and buffers with static offsets on the twin: the instruction overhead
    of the moves (-icount makes both counts exact). Different outputs would be a bug in mcugen."""
    from mcugen.link.device_run import open_device, run_samples
    from mcugen.pipeline import with_allocator

    assert gen.dynamic is not None
    static = with_allocator(gen, dynamic.STATIC)
    result = build(static, target, workdir / "static")
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, static.graph, samples, emulated=True)
    for ours, theirs in zip(report["_outputs"], run.outputs[0], strict=True):
        if not np.array_equal(ours, theirs):
            raise RunError(
                f"allocator {gen.dynamic.mode} gives other outputs than static offsets: "
                "a bug in mcugen",
                hint="use --allocator static and report the model",
            )
    base = run.instructions(run.ticks_per_inference[0])
    extra = report["per_inference"] - base
    return {
        "static_per_inference": base,
        "allocator_overhead": extra,
        "allocator_overhead_percent": round(100.0 * extra / base, 3) if base else 0.0,
    }


def _print_run(args: argparse.Namespace, target: Target, r: dict[str, Any]) -> None:
    print(f"mcugen: ran {args.model} on {target.label} with {r['source']} in {r['seconds']:.2f} s")
    if "per_inference" in r:
        print_device_figures(r)
        print_estimate(r)
    else:
        print(f"  arena: {r['arena_bytes']} bytes")
    if r["allocator"] == dynamic.STATIC:
        print("  allocator: static offsets, nothing moved")
    else:
        print(
            f"  allocator: {r['allocator']} (static offsets would need "
            f"{r['static_arena_bytes']:,} bytes), {r['moved_bytes_per_inference']:,} bytes moved "
            "per inference"
        )
    if "static_per_inference" in r:
        print(
            f"  dynamic allocation costs {r['allocator_overhead']:+,} {r['unit']} per inference "
            f"({r['allocator_overhead_percent']:+.3f} %) against static offsets "
            f"({r['static_per_inference']:,}, same outputs)"
        )
    elif r["allocator"] == dynamic.PAGED:
        pass  # the paging figures are in the plan (mcugen plan --board) and in verify
    elif r["allocator"] != dynamic.STATIC:
        print("  instruction overhead against static offsets: measured with --emulate")
    for out in r["outputs"]:
        vals = out["values"]
        head = ", ".join(str(v) for v in vals[:10]) + (", ..." if len(vals) > 10 else "")
        print(f"  output {out['name']} {out['dtype']}{out['shape']}: [{head}]")
    print_operator_table(r)
    if "outputs_file" in r:
        print(f"  outputs written to {r['outputs_file']}")
