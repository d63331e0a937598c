"""The report's figures: plain JSON-able data built from the plan, the fit verdict, the strategy
comparison, a profiled run on the twin and a current trace. Pure: no I/O, no markup. The page
shows these numbers and embeds them as JSON, so tests compare the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcugen import __version__
from mcugen.boards import Board
from mcugen.model.ir import Graph
from mcugen.model.macs import graph_macs
from mcugen.plan.buffers import live_bytes_per_step
from mcugen.plan.compare import TFLM_BASELINE, StrategyRun
from mcugen.plan.fit import Fit
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.report.html.trace import CurrentTrace
from mcugen.report.paging import fast_in_use
from mcugen.report.patches import macs_added
from mcugen.report.text import run_json

NOT_MEASURED = "not measured (no power monitor)"
#: at most this many points of a trace are drawn (min and max of each bucket, so peaks stay)
TRACE_POINTS = 1200


@dataclass(frozen=True)
class ReportInputs:
    """Everything the page is made of; `device` is `commands._common.device_report(...,
    profile=True)` of a run on the twin (None when it did not run, `run_note` says why)."""

    model: str
    graph: Graph
    plan: MemoryPlan
    fit: Fit
    board: Board
    runs: Sequence[StrategyRun] | None = None
    device: dict[str, Any] | None = None
    run_note: str = ""
    trace: CurrentTrace | None = None


def report_figures(r: ReportInputs) -> dict[str, Any]:
    """The figures of the page, as one JSON-able dict (deterministic for the same inputs)."""
    return {
        "mcugen_version": __version__,
        "model": {
            "name": r.model,
            "sha256": r.graph.sha256,
            "operators": r.plan.model_operators or len(r.graph.operators),
            "tensors": len(r.graph.tensors),
            "macs": graph_macs(r.graph),
        },
        "board": {
            "name": r.board.name,
            "description": r.board.description,
            "core": r.board.core,
            "clock_hz": r.board.clock_hz,
        },
        "verdict": verdict(r.fit),
        "memory": memory_parts(r.fit),
        "timelines": timelines(r.graph, r.plan, r.fit),
        "operators": operators(r.device, r.run_note, r.plan),
        "strategies": strategies(r.plan, r.runs),
        "patches": patch_stage(r.graph, r.plan),
        "trace": trace_figures(r.trace),
    }


def patch_stage(graph: Graph, plan: MemoryPlan) -> dict[str, Any] | None:
    """The patch stage the plan runs (plan/patches), None when it runs the graph whole."""
    found = plan.patches
    if found is None or found.stage is None:
        return None
    stage = found.stage
    return {
        "first": stage.ops[0],
        "last": stage.ops[-1],
        "operators": len(stage.ops),
        "grid": f"{stage.grid[0]}x{stage.grid[1]}",
        "macs_added": macs_added(plan),
        "overhead_percent": round(100 * macs_added(plan) / max(found.total_macs, 1), 1),
        "stages": 1 + len(plan.later_patches),
        "arena_without": plan.arena_without_patches,
        "arena": plan.arena_bytes,
        "operators_with_tiles": len(graph.operators),
    }


def verdict(fit: Fit) -> dict[str, Any]:
    """Fits or not, by how much, and why (the largest part, or the error `plan` would give)."""
    problem = fit.problem()
    ram = _parts_of_ram(fit)
    flash = _parts_of_flash(fit)
    return {
        "fits": fit.fits,
        "board": fit.board,
        "ram_need": fit.ram_need,
        "ram_size": fit.ram_size,
        "ram_free": fit.ram_size - fit.ram_need,
        "ram_over": max(fit.ram_need - fit.ram_size, 0),
        "flash_need": fit.flash_need,
        "flash_size": fit.flash_size,
        "flash_free": fit.flash_size - fit.flash_need,
        "flash_over": max(fit.flash_need - fit.flash_size, 0),
        "flash_linked": fit.linked is not None,
        "flash_note": "" if fit.linked else f"code not counted: {fit.unlinked}",
        "largest_ram": max(ram, key=lambda p: p["bytes"]),
        "largest_flash": max(flash, key=lambda p: p["bytes"]),
        "summary": fit.summary(),
        "ram": fit.ram().as_json(),
        "problem": problem.line() if problem is not None else None,
    }


def _parts_of_ram(fit: Fit) -> list[dict[str, Any]]:
    """The RAM's parts under the names every command uses (`plan.fit.RamUse`)."""
    return [{"name": n, "bytes": b} for n, b in fit.ram().parts()]


def _parts_of_flash(fit: Fit) -> list[dict[str, Any]]:
    if fit.linked is None:
        return [{"name": "weights", "bytes": fit.weights}]
    parts = [("weights", fit.weights), ("code", fit.linked.code)]
    parts.append(("tables and parameters", fit.linked.tables))
    return [{"name": n, "bytes": b} for n, b in parts]


def memory_parts(fit: Fit) -> dict[str, Any]:
    """Flash and RAM as stacked parts against each limit; `source` says where each comes from."""
    flash_source = (
        "linked for the board (arm-none-eabi-gcc, as `mcugen build` links it)"
        if fit.linked
        else f"weights only: {fit.unlinked}"
    )
    return {
        "flash": {
            "limit": fit.flash_size,
            "used": fit.flash_need,
            "parts": _parts_of_flash(fit),
            "source": flash_source,
            "external": {"memory": fit.external_memory, "bytes": fit.external_weights}
            if fit.external_memory
            else None,
        },
        "ram": {
            "limit": fit.ram_size,
            "used": fit.ram_need,
            "parts": _parts_of_ram(fit),
            "source": "counted by the planner term by term; equal to the linked firmware's RAM",
            "external": {"memory": fit.state_memory, "bytes": fit.external_state}
            if fit.state_memory
            else None,
        },
    }


def step_labels(graph: Graph, plan: MemoryPlan) -> list[str]:
    """ "(inputs)" for step 0, then "CONV_2D (op 3)" for each operator in the plan's order."""
    labels = ["(inputs)"]
    for op_index in plan.order:
        op = graph.operators[op_index]
        labels.append(f"{op.custom_code or op.opcode} (op {op_index})")
    return labels


def timelines(graph: Graph, plan: MemoryPlan, fit: Fit) -> list[dict[str, Any]]:
    """Live bytes over the steps, one timeline per pool: the arena, each memory of a split
    arena, or the fast memory of a paged plan."""
    labels = step_labels(graph, plan)
    steps = len(plan.order)

    def line(pool: str, kind: str, live: list[int], size: int, room: int | None) -> dict[str, Any]:
        peak = max(live, default=0)
        return {
            "pool": pool,
            "kind": kind,
            "size": size,
            "room": room,
            "peak": peak,
            "peak_step": live.index(peak) if live else 0,
            "live": live,
            "labels": labels,
        }

    if plan.paging is not None:
        paging = plan.paging
        used = fast_in_use(paging)
        return [line("fast memory", "paged", used, paging.fast_bytes, paging.capacity)]
    split = plan.pools
    if split is not None and split.split:
        found = []
        for p in split.pools:
            members = [b for b in plan.buffers if b.id in p.offsets]
            live = live_bytes_per_step(members, steps)
            found.append(line(p.name, "pool", live, p.size, p.memory.size))
        return found
    return [line("arena", "arena", plan.live_bytes, fit.arena, None)]


def operators(device: dict[str, Any] | None, note: str, plan: MemoryPlan) -> dict[str, Any]:
    """Per-operator counts and estimated energy of the twin run, or why there are none."""
    if device is None or "per_operator" not in device:
        return {"ran": False, "note": note or "not run", "rows": [], "estimate": None}
    unit = device["unit"]
    total = sum(row[unit] for row in device["per_operator"]) or 1
    rows = [
        {
            "step": row["step"] + 1,  # the timeline's step: 0 is the inputs
            "operator": row["operator"],
            "opcode": row["opcode"],
            "kernel": row["kernel"],
            "macs": row["macs"],
            "count": row[unit],
            "per_mac": round(row[unit] / row["macs"], 2) if row["macs"] else None,
            "share_pct": round(100.0 * row[unit] / total, 1),
            "estimate_uj": row.get("estimate_uj"),
        }
        for row in device["per_operator"]
    ]
    estimate = device.get("estimate")
    calibrated = estimate is not None and not estimate["calibration"].startswith("none")
    return {
        "ran": True,
        "note": note,
        "where": f"{device['board']}'s QEMU twin" if device["emulated"] else device["board"],
        "unit": unit,
        "per_inference": device["per_inference"],
        "macs": device["macs"],
        "per_mac": device["per_mac"],
        "stack_used": device["stack_used"],
        "stack_bytes": device["stack_bytes"],
        "same_order": [r["operator"] for r in rows] == list(plan.order),
        "rows": rows,
        "estimate": estimate,
        "estimate_calibrated": calibrated,
        "estimate_note": device.get("estimate_note", ""),
        "twin_sizes": {
            k: device["sizes"][k] for k in ("flash_bytes", "ram_bytes", "weights", "code", "arena")
        },
    }


def strategies(plan: MemoryPlan, runs: Sequence[StrategyRun] | None) -> dict[str, Any]:
    """The plan report's comparison: every order/layout pair, TFLM's baseline and the bounds."""
    if not runs:
        return {
            "rows": [],
            "tflm_arena": None,
            "chosen_arena": plan.arena_bytes,
            "input_kept": False,
        }
    chosen = (plan.order_strategy.partition("(")[0], plan.layout_strategy)
    rows = []
    for r in runs:
        row = run_json(r, (r.order, r.layout) == chosen)
        row["tflm"] = (r.order, r.layout) == TFLM_BASELINE
        rows.append(row)
    tflm = next((r["arena_bytes"] for r in rows if r["tflm"] and not r["error"]), None)
    return {
        "rows": rows,
        "tflm_arena": tflm,
        "chosen_arena": plan.arena_bytes,
        "saved_vs_tflm": None if tflm is None else tflm - plan.arena_bytes,
        "peak_live_bytes": plan.lower_bound,
        "arena_lower_bound": plan.arena_lower_bound,
        "largest_arena": max((r["arena_bytes"] for r in rows if not r["error"]), default=0),
        "input_kept": plan.input_kept,
        "input_kept_saving": plan.input_kept_saving,
    }


def trace_figures(trace: CurrentTrace | None) -> dict[str, Any]:
    """The trace's summary, its windows and at most TRACE_POINTS points to draw (ms, mA)."""
    if trace is None:
        return {"measured": False, "note": NOT_MEASURED}
    amps = trace.amperes
    return {
        "measured": True,
        "note": "",
        "source": trace.source,
        "rate_hz": trace.rate_hz,
        "samples": len(amps),
        "ms": round(trace.seconds * 1e3, 3),
        "mean_ma": round(sum(amps) / len(amps) * 1e3, 3),
        "peak_ma": round(max(amps) * 1e3, 3),
        "volts": trace.volts,
        "marks_ms": [round(m / trace.rate_hz * 1e3, 3) for m in trace.marks],
        "windows": trace.windows(),
        "points": _envelope(amps, trace.rate_hz),
    }


def _envelope(amps: Sequence[float], rate_hz: float) -> list[list[float]]:
    """(ms, mA) points: every sample when few, else each bucket's minimum and maximum in time
    order, so a short spike is still drawn."""
    if len(amps) <= TRACE_POINTS:
        return [[round(k / rate_hz * 1e3, 4), round(a * 1e3, 4)] for k, a in enumerate(amps)]
    points = []
    buckets = TRACE_POINTS // 2
    for b in range(buckets):
        start, end = b * len(amps) // buckets, (b + 1) * len(amps) // buckets
        part = amps[start:end]
        lo = min(range(len(part)), key=part.__getitem__)
        hi = max(range(len(part)), key=part.__getitem__)
        for k in sorted({lo, hi}):
            points.append([round((start + k) / rate_hz * 1e3, 4), round(part[k] * 1e3, 4)])
    return points
