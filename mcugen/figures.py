"""The figures the commands print and the Python API returns, computed once (issue 36): a model
planned as `mcugen build` would plan it, its fit on a board with the firmware linked, the
arena and allocator figures of generated firmware, and the report of a run on a board or its
twin. Commands and mcugen/api.py call these; nothing here prints or reads arguments."""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from mcugen.boards import Target
from mcugen.codegen.lower import Lowered
from mcugen.errors import UnsupportedError
from mcugen.firmware.compile import BuildResult
from mcugen.model.ir import Graph
from mcugen.model.macs import graph_macs, operator_macs
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, prepare, render
from mcugen.plan import dynamic
from mcugen.plan.buffers import align_up
from mcugen.plan.compare import TFLM_BASELINE, StrategyRun, compare_strategies
from mcugen.plan.fit import MIN_ARENA_BYTES, Fit, weight_bytes
from mcugen.plan.memory_plan import MemoryPlan, plan_memory
from mcugen.plan.ram_use import LinkedFlash


@dataclass(frozen=True)
class Planned:
    """The plan `mcugen build` would use: after rewrites, with kernel scratch and aliasing. For a
    model with operators the runtime lacks, the file planned as it is (no rewrites, scratch or
    aliasing), `lowered` None and `unsupported` saying what the runtime lacks."""

    graph: Graph
    plan: MemoryPlan
    lowered: dict[int, Lowered] | None
    unsupported: str = ""
    options: PlanOptions | None = None  # what it was planned with


def plan_model(graph: Graph, options: PlanOptions) -> Planned:
    try:
        g, lowered, plan = prepare(graph, options)
        return Planned(g, plan, lowered, options=options)
    except UnsupportedError as exc:
        plain = replace(options, in_place=False, rewrites=False)
        plan = plan_memory(
            graph, order=plain.order, layout=plain.layout, time_budget=plain.time_budget
        )
        return Planned(graph, plan, None, exc.what, options=options)


def strategy_runs(
    original: Graph, planned: Planned, *, in_place: bool | None = None
) -> tuple[StrategyRun, ...]:
    """Every registered order and layout, each row planned from `original` exactly as
    `mcugen plan --order X --layout Y` with `planned`'s other options plans it (rewrites,
    kernel scratch, sharing, kept input, pools, patch stage, paging), and TFLM's row as
    `--tflm-plan` plans it. `in_place` False turns sharing off for every row. Each row counts
    the firmware runner's copy of the input when its plan does not keep the input in place."""
    options = planned.options or PlanOptions()
    if in_place is False:
        options = replace(options, in_place=False)
    tflm = options.as_tflm()
    chosen = (options.order, options.layout)
    plans = {chosen: planned.plan}

    def plan_pair(order: str, layout: str) -> MemoryPlan:
        pair = tflm if (order, layout) == TFLM_BASELINE else replace(options, order=order)
        plans[(order, layout)] = plan_model(original, replace(pair, layout=layout)).plan
        return plans[(order, layout)]

    runs = compare_strategies(
        planned.graph, known={chosen: planned.plan}, plan_pair=plan_pair, chosen=chosen
    )
    copy = input_copy_bytes(original) if options.board is not None else 0
    return tuple(
        replace(r, input_copy_bytes=0 if r.error or plans[(r.order, r.layout)].input_kept else copy)
        for r in runs
    )


def input_copy_bytes(graph: Graph) -> int:
    """RAM of the firmware runner's copy of input 0 (fit.firmware_ram counts the same)."""
    return align_up(graph.tensors[graph.inputs[0]].nbytes, 16) if graph.inputs else 0


def linked_fit(planned: Planned, target: Target, name: str) -> Fit:
    """The plan against `target`'s RAM and flash. A model the runtime can run is rendered and
    linked as `mcugen build` would (for the board itself, not its twin), so flash counts code
    and tables too; RAM is the planner's count, which the linked firmware's equals
    (tests/unit/test_fit.py, benchmarks/fit.py)."""
    from mcugen.firmware.compile import linked_sizes
    from mcugen.firmware.fits import target_fit

    options = planned.options or PlanOptions()
    graph, plan = planned.graph, planned.plan
    fit = target_fit(graph, plan, options.allocator, weight_bytes(graph), target)
    if planned.lowered is None:
        return replace(fit, unsupported=planned.unsupported)
    if shutil.which(target.port_board.cc) is None:
        return replace(fit, unlinked=f"{target.port_board.cc} not found (scripts/install.sh)")
    gen = render(graph, planned.lowered, plan, model_name=name, allocator=options.allocator)
    sizes = linked_sizes(gen, target)
    weights = 0 if sizes.external_weights else sizes.weights
    return replace(fit, weights=weights, linked=LinkedFlash(sizes.code, sizes.other_rodata))


def arena_bytes(gen: Generated) -> int:
    """The arena the firmware declares: all its pools together when split (the view-model's
    `arena_bytes` is the first pool's, the one the runtime addresses as ctx->arena)."""
    split = gen.plan.pools
    if split is not None and split.split and gen.dynamic is None:
        return sum(p.size for p in split.pools)
    return max(gen.view_model.arena_bytes, MIN_ARENA_BYTES)  # as model.c.j2 declares it


def allocator_figures(gen: Generated) -> dict[str, Any]:
    """Allocator mode, its arena, the static layout's arena and the bytes moved per inference."""
    dyn = gen.dynamic
    return {
        "allocator": dyn.mode if dyn else dynamic.STATIC,
        "arena_bytes": arena_bytes(gen),
        "static_arena_bytes": gen.plan.arena_bytes,
        "moved_bytes_per_inference": dyn.moved_bytes if dyn else 0,
    }


def device_report(
    gen: Generated,
    target: Target,
    result: BuildResult,
    samples: list[list[np.ndarray]],
    port: str | None,
    profile: bool,
) -> dict[str, Any]:
    """Run `samples` on the board or its twin: counts, memory, sizes and outputs (under
    "_outputs" the arrays themselves, for the caller to save or drop before printing JSON)."""
    from mcugen.firmware.sizes import firmware_sizes, linked_ram
    from mcugen.link.device_run import open_device, run_samples

    with open_device(target, result.executable, None if target.emulate else port) as link:
        run = run_samples(link, gen.graph, samples, emulated=target.emulate, profile=profile)
    sizes = firmware_sizes(result.executable, target)
    ram = linked_ram(sizes, gen.plan)
    report: dict[str, Any] = {
        "board": target.board.name,
        "emulated": target.emulate,
        "seconds": run.seconds,
        "unit": run.unit,
        "per_inference": run.instructions(run.ticks_per_inference[0]),
        "arena_bytes": ram.arena,
        "device_arena_bytes": run.arena_bytes,  # what the runtime reports: the first pool
        "ram": ram.as_json(),
        "ram_text": ram.text(),
        "stack_used": run.stack_used,
        "stack_bytes": run.stack_bytes,
        "moved_bytes": run.moved_bytes,
        "sizes": asdict(sizes),
        "outputs": outputs_json(gen, run.outputs[0]),
        "_outputs": run.outputs[0],
    }
    if profile:
        report["per_operator"] = [
            {
                "step": k,
                "operator": gen.plan.order[k],
                "opcode": gen.graph.operators[gen.plan.order[k]].opcode,
                "kernel": gen.lowered[gen.plan.order[k]].variant,
                "macs": operator_macs(gen.graph, gen.graph.operators[gen.plan.order[k]]),
                run.unit: run.instructions(t),
            }
            for k, t in enumerate(run.node_ticks)
        ]
    macs = graph_macs(gen.graph)
    report["macs"] = macs
    report["per_mac"] = round(report["per_inference"] / macs, 3) if macs else None
    if target.emulate:
        report.update(energy_estimate(target, report))
    return report


def energy_estimate(target: Target, report: dict[str, Any]) -> dict[str, Any]:
    """The board's estimated time and energy per inference (and per operator) from the twin's
    instructions (mcugen/energy.py), or why there is none."""
    board, model = target.board, target.board.energy
    if model is None:
        return {"estimate": None, "estimate_note": f"{board.name} has no [energy] model"}
    total = model.estimate(report["per_inference"], board.clock_hz)
    for row in report.get("per_operator", []):
        row["estimate_uj"] = round(model.estimate(row["instructions"], board.clock_hz).uj, 3)
    return {
        "estimate": {
            **total.as_json(),
            "board": board.name,
            "clock_hz": board.clock_hz,
            "cycles_per_instruction": model.cycles_per_instruction,
            "run_mw": round(model.run_watts(board.clock_hz) * 1e3, 2),
            "calibration": model.calibration,
        }
    }


def outputs_json(gen: Generated, outputs: list[np.ndarray]) -> list[dict[str, Any]]:
    """Name, dtype, shape and values of each graph output, as the JSON reports list them."""
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


def host_report(
    gen: Generated, result: BuildResult, samples: list[list[np.ndarray]]
) -> dict[str, Any]:
    """Run `samples` in the host build `result`: the same keys as `device_report` has."""
    from mcugen.link.host_run import run_host

    run = run_host(result.executable, gen.graph, samples)
    return {
        "board": "host",
        "emulated": False,
        "seconds": run.seconds,
        "arena_bytes": arena_bytes(gen),
        "outputs": outputs_json(gen, run.outputs[0]),
        "_outputs": run.outputs[0],
    }
