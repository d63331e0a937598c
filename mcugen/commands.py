"""The CLI's commands: orchestrate the pipeline stages and print what happened and what it cost."""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from mcugen.boards import Target, board_names, load_board, resolve_target
from mcugen.errors import McugenError, RunError
from mcugen.host.project import BuildResult, build
from mcugen.pipeline import Generated, PlanOptions, generate_from_file


def target_for(args: argparse.Namespace) -> Target:
    return resolve_target(load_board(args.board), emulate=getattr(args, "emulate", False))


def generate_for(args: argparse.Namespace) -> Generated:
    return generate_from_file(args.model, plan_options(args))


def plan_options(args: argparse.Namespace) -> PlanOptions:
    allocator = getattr(args, "allocator", "static")
    if getattr(args, "tflm_plan", False):
        return replace(PlanOptions.tflm(), allocator=allocator)
    return PlanOptions(
        order=args.order,
        layout=args.layout,
        in_place=not args.no_inplace,
        rewrites=not args.no_rewrite,
        time_budget=args.time_budget,
        allocator=allocator,
    )


def cmd_plan(args: argparse.Namespace) -> int:
    from mcugen.model.tflite_import import load_model
    from mcugen.plan.memory_plan import plan_memory
    from mcugen.report import plan_json, plan_text

    graph = load_model(args.model)
    plan = plan_memory(graph, order=args.order, layout=args.layout)
    if args.json:
        print(json.dumps(plan_json(graph, plan)))
    else:
        print(plan_text(graph, plan, str(args.model)))
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    target = target_for(args)
    gen = generate_for(args)
    suffix = "-qemu" if target.emulate else ""
    out = args.output or Path("build") / f"{args.model.stem}-{target.board.name}{suffix}"
    result = build(gen, target, out)
    print(f"mcugen: built {args.model} for {target.label} in {result.compile_seconds:.2f} s")
    print(f"  project:  {result.directory}/ ({len(result.files)} files)")
    print(f"  output:   {result.executable}")
    print_memory(gen, target, result)
    return 0


def print_memory(gen: Generated, target: Target, result: BuildResult) -> None:
    plan = gen.plan
    print(
        f"  arena:    {gen.view_model.arena_bytes} bytes (lower bound {plan.lower_bound} for this "
        f"order, peak at step {plan.peak_step})"
    )
    print_allocator(gen)
    if target.board.is_host:
        weights = sum(len(c.data) for c in gen.view_model.constants)
        print(f"  weights:  {weights} bytes")
        return
    from mcugen.host.sizes import firmware_sizes

    sizes = firmware_sizes(result.executable, target)
    for name, used, limit, mem in (
        ("flash", sizes.flash_bytes, sizes.flash_limit, "flash"),
        ("RAM", sizes.ram_bytes, sizes.ram_limit, "RAM"),
    ):
        print(
            f"  {name + ':':9} {used:>9} of {limit} bytes ({100 * used / limit:.1f} %), "
            f"{limit - used} free"
        )
        for what, size, _, where in sizes.rows():
            if where == mem:
                print(f"    {what:24} {size:>9}")


def allocator_figures(gen: Generated) -> dict[str, Any]:
    """Allocator mode, its arena, the static layout's arena and the bytes moved per inference."""
    dyn = gen.dynamic
    return {
        "allocator": dyn.mode if dyn else "static",
        "arena_bytes": gen.view_model.arena_bytes,
        "static_arena_bytes": gen.plan.arena_bytes,
        "moved_bytes_per_inference": dyn.moved_bytes if dyn else 0,
    }


def print_allocator(gen: Generated) -> None:
    f = allocator_figures(gen)
    print(
        f"  allocator: {f['allocator']}, arena {f['arena_bytes']} bytes (static layout "
        f"{f['static_arena_bytes']}), {f['moved_bytes_per_inference']} bytes moved per inference"
    )


def inputs_for(args: argparse.Namespace, gen: Generated, count: int) -> list[list[np.ndarray]]:
    from mcugen.host.host_run import random_inputs
    from mcugen.io import load_inputs

    if getattr(args, "input", None):
        return [load_inputs(args.input, gen.graph)]
    return [random_inputs(gen.graph, args.seed + k) for k in range(count)]


def require_location(target: Target, port: str | None) -> None:
    """A Cortex-M board runs either on its QEMU twin (--emulate) or on a serial port (--port)."""
    if not target.board.is_host and not target.emulate and not port:
        raise McugenError(
            f"say where {target.board.name} runs",
            hint="add --emulate (its QEMU twin) or --port /dev/ttyACM0",
        )


def cmd_run(args: argparse.Namespace) -> int:
    target = target_for(args)
    require_location(target, args.port)
    gen = generate_for(args)
    samples = inputs_for(args, gen, 1)
    with tempfile.TemporaryDirectory(prefix="mcugen-") as tmp:
        result = build(gen, target, Path(tmp) / "project")
        if target.board.is_host:
            report = _run_host(gen, result, samples)
        else:
            report = device_report(gen, target, result, samples, args.port, args.profile)
            if gen.dynamic is not None and target.emulate:
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


def _run_host(
    gen: Generated, result: BuildResult, samples: list[list[np.ndarray]]
) -> dict[str, Any]:
    from mcugen.host.host_run import run_host

    run = run_host(result.executable, gen.graph, samples)
    return {
        "board": "host",
        "emulated": False,
        "seconds": run.seconds,
        "arena_bytes": gen.view_model.arena_bytes,
        "outputs": _outputs_json(gen, run.outputs[0]),
        "_outputs": run.outputs[0],
    }


def device_report(
    gen: Generated,
    target: Target,
    result: BuildResult,
    samples: list[list[np.ndarray]],
    port: str | None,
    profile: bool,
) -> dict[str, Any]:
    from mcugen.host.device_run import open_device, run_samples
    from mcugen.host.sizes import firmware_sizes

    with open_device(target, result.executable, None if target.emulate else port) as link:
        run = run_samples(link, gen.graph, samples, emulated=target.emulate, profile=profile)
    report: dict[str, Any] = {
        "board": target.board.name,
        "emulated": target.emulate,
        "seconds": run.seconds,
        "unit": run.unit,
        "per_inference": run.instructions(run.ticks_per_inference[0]),
        "arena_bytes": run.arena_bytes,
        "stack_used": run.stack_used,
        "stack_bytes": run.stack_bytes,
        "sizes": asdict(firmware_sizes(result.executable, target)),
        "outputs": _outputs_json(gen, run.outputs[0]),
        "_outputs": run.outputs[0],
    }
    if profile:
        report["per_operator"] = [
            {
                "step": k,
                "operator": gen.plan.order[k],
                "opcode": gen.graph.operators[gen.plan.order[k]].opcode,
                run.unit: run.instructions(t),
            }
            for k, t in enumerate(run.node_ticks)
        ]
    return report


def static_baseline(
    gen: Generated,
    target: Target,
    workdir: Path,
    samples: list[list[np.ndarray]],
    report: dict[str, Any],
) -> dict[str, Any]:
    """Run the same order and buffers with static offsets on the twin: the instruction overhead
    of the moves (-icount makes both counts exact). Different outputs would be a bug in mcugen."""
    from mcugen.host.device_run import open_device, run_samples
    from mcugen.pipeline import with_allocator

    assert gen.dynamic is not None
    static = with_allocator(gen, "static")
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


def _outputs_json(gen: Generated, outputs: list[np.ndarray]) -> list[dict[str, Any]]:
    result = []
    for t_index, arr in zip(gen.graph.outputs, outputs, strict=True):
        t = gen.graph.tensors[t_index]
        result.append(
            {
                "name": t.name,
                "dtype": t.dtype,
                "shape": list(t.shape),
                "values": arr.ravel().tolist(),
            }
        )
    return result


def _print_run(args: argparse.Namespace, target: Target, r: dict[str, Any]) -> None:
    print(f"mcugen: ran {args.model} on {target.label} with {r['source']} in {r['seconds']:.2f} s")
    if "per_inference" in r:
        print_device_figures(r)
    else:
        print(f"  arena: {r['arena_bytes']} bytes")
    print(
        f"  allocator: {r['allocator']} (static layout {r['static_arena_bytes']} bytes), "
        f"{r['moved_bytes_per_inference']} bytes moved per inference"
    )
    if "static_per_inference" in r:
        print(
            f"  dynamic allocation costs {r['allocator_overhead']:+,} {r['unit']} per inference "
            f"({r['allocator_overhead_percent']:+.3f} %) against static offsets "
            f"({r['static_per_inference']:,}, same outputs)"
        )
    elif r["allocator"] != "static":
        print("  instruction overhead against static offsets: measured with --emulate")
    for out in r["outputs"]:
        vals = out["values"]
        head = ", ".join(str(v) for v in vals[:10]) + (", ..." if len(vals) > 10 else "")
        print(f"  output {out['name']} {out['dtype']}{out['shape']}: [{head}]")
    print_operator_table(r)
    if "outputs_file" in r:
        print(f"  outputs written to {r['outputs_file']}")


def print_device_figures(r: dict[str, Any]) -> None:
    """Per-inference count, arena, stack high-water and sizes of a `device_report`."""
    print(f"  per inference: {r['per_inference']:,} {r['unit']}")
    print(
        f"  arena: {r['arena_bytes']} bytes; stack used {r['stack_used']} of "
        f"{r['stack_bytes']} bytes"
    )
    s = r["sizes"]
    print(
        f"  flash {s['flash_bytes']} of {s['flash_limit']} bytes (weights {s['weights']}, "
        f"code {s['code']}); RAM {s['ram_bytes']} of {s['ram_limit']}"
    )


def print_operator_table(r: dict[str, Any]) -> None:
    """The per-operator rows of a profiled `device_report` (nothing if it was not profiled)."""
    for row in r.get("per_operator", []):
        print(
            f"    step {row['step']:>3}  op {row['operator']:>3} {row['opcode']:<24} "
            f"{row[r['unit']]:>12,}"
        )


def cmd_verify(args: argparse.Namespace) -> int:
    from mcugen.verify import verify

    target = target_for(args)
    require_location(target, args.port)
    gen = generate_for(args)
    samples = inputs_for(args, gen, args.samples)
    report = verify(gen, target, samples, port=args.port)
    print(report.text())
    return 0 if report.ok else 1


def cmd_boards(args: argparse.Namespace) -> int:
    print(f"{'board':16} {'core':10} {'flash':>9} {'RAM':>9} {'clock':>8}  emulation")
    for name in board_names():
        b = load_board(name)
        if b.is_host:
            print(f"{name:16} {'host':10} {'-':>9} {'-':>9} {'-':>8}  runs as a process")
            continue
        assert b.flash and b.ram
        emu = f"QEMU {b.emulator}" if b.emulator else (f"twin on {b.twin}" if b.twin else "none")
        print(
            f"{name:16} {b.core:10} {b.flash.size // 1024:>7}KB {b.ram.size // 1024:>7}KB "
            f"{b.clock_hz / 1e6:>5.0f}MHz  {emu}"
        )
    return 0


def require(cond: bool, message: str) -> None:
    if not cond:
        raise RunError(message)
