"""`mcugen train`: fine-tune a model's last layers on the host, a board or its QEMU twin.

The training graph (mcugen/train/) is planned and built like any model; every sample is one
invoke (the host build runs them in one process, a board takes them over the serial protocol),
and the trained weights come back as the model state (the host's state file, READ_STATE). The
tuned model is written only after the run succeeded."""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from mcugen.boards import Target
from mcugen.commands._common import plan_options, require_location, target_for
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.firmware.fits import target_fit
from mcugen.firmware.project import model_weights
from mcugen.firmware.sizes import FirmwareSizes, firmware_sizes
from mcugen.link.train_run import (
    TrainRun,
    operator_instructions,
    train_on_device,
    train_on_host,
)
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.outputs import write_file
from mcugen.pipeline import Generated, PlanOptions, generate
from mcugen.plan import dynamic
from mcugen.plan.paging.target import PagingCosts
from mcugen.plan.target import memory_target
from mcugen.train.dataset import check_dataset, load_dataset
from mcugen.train.export import float_model, requantized_model
from mcugen.train.graph import TrainingGraph, build_training_graph
from mcugen.train.metrics import EpochFigures, check_trained, epoch_figures
from mcugen.train.options import TrainOptions
from mcugen.train.schedule import Budgets, ScheduleError
from mcugen.train.schedule.training import (
    EnergyPrices,
    PageCosts,
    ScheduledTraining,
    schedule_training,
)
from mcugen.train.steps import Dataset, Segment, held_out_every_epoch, run_segments


def train_options(args: argparse.Namespace) -> TrainOptions:
    """The training options of `mcugen train` and `mcugen plan --trainable`."""
    return TrainOptions(
        trainable=args.trainable,
        loss=args.loss,
        learning_rate=args.lr,
        momentum=args.momentum,
        weight_decay=args.weight_decay,
        accumulate=args.accumulate,
    )


def cmd_train(args: argparse.Namespace) -> int:
    target = target_for(args)
    require_location(target, args.port)
    checkpoints = args.checkpoint_every is not None or args.resume
    if checkpoints and target.board.is_host:
        raise McugenError(
            "checkpoints live in a board's store; the host build has none",
            hint="train on a board or its twin (--board nucleo-f767 --emulate)",
        )
    if args.checkpoint_dir is not None and not (target.emulate and args.checkpoint_dir.is_dir()):
        raise McugenError(
            "--checkpoint-dir needs --emulate and an existing directory",
            where=str(args.checkpoint_dir),
        )
    tg, segments, held_out = _checked_run(args)
    planning = replace(
        plan_options(args, firmware=not target.board.is_host, target=target), rewrites=False
    )
    gen, scheduled, unit = _plan_within_budget(args, tg, planning, target, segments[0].steps[0])
    with tempfile.TemporaryDirectory(prefix="mcugen-train-") as tmp:
        result = build(gen, target, Path(tmp) / "project")
        linked = None if target.board.is_host else firmware_sizes(result.executable, target)
        if target.board.is_host:
            run = train_on_host(gen, result.executable, segments)
        else:
            run = train_on_device(
                gen,
                target,
                result.executable,
                args.port,
                segments,
                checkpoint_every=args.checkpoint_every or 0,
                resume=args.resume,
                storage=args.checkpoint_dir or Path.cwd(),
            )
    check_trained(tg, run.state)
    if args.output is not None:
        tuned = requantized_model(tg, run.state) if args.requantize else float_model(tg, run.state)
        write_file(args.output, write_model(tuned))
    report = _report(args, tg, fast_arena(gen), gen.view_model.state_bytes, run)
    report["held_out"] = _held_out_report(args, tg, held_out)
    report["schedule"] = _schedule_report(args, scheduled, unit)
    report["paging"] = _paging_report(gen)
    report["state"] = state_report(gen, target, linked)
    if args.json:
        print(json.dumps(report))
    else:
        _print(report)
    return 0


def _checked_run(args: argparse.Namespace) -> tuple[TrainingGraph, list[Segment], Dataset | None]:
    """The training graph and the run's invokes, from data checked against it (mcugen/train/
    dataset.py) before anything is planned or built; the held-out data (--val-data) too."""
    data = load_dataset(args.data)
    held_out = load_dataset(args.val_data) if args.val_data is not None else None
    tg = build_training_graph(load_model(args.model), train_options(args))
    check_dataset(tg, data, where=str(args.data))
    if held_out is not None:
        check_dataset(tg, held_out, where=str(args.val_data), held_out=True)
    sources = (str(args.data), str(args.val_data or ""))
    return tg, run_segments(tg, data, args.epochs, held_out, sources=sources), held_out


def page_costs(paging: PagingCosts | None) -> PageCosts | None:
    """The schedule's page costs: copies to and from the board's own slow memory (an array in
    RAM saves no RAM, so it is not offered to the schedule)."""
    if paging is None or not paging.slow.external:
        return None
    model = replace(paging, objective="cycles").cost_model()
    return PageCosts(math.ceil(model.copy_out), math.ceil(model.copy_in))


def energy_prices(
    args: argparse.Namespace, target: Target | None, paging: PagingCosts | None
) -> EnergyPrices | None:
    """With --objective energy, the schedule's prices from the board's [energy] model (an
    estimate: mcugen/energy.py); memories without a per-byte figure add nothing to a copy's
    cycles. None with --objective cycles."""
    if getattr(args, "objective", "cycles") != "energy":
        return None
    per_cycle = memory_target(target).pj_per_cycle if target is not None else None
    if target is None or target.board.energy is None or per_cycle is None:
        name = target.board.name if target is not None else "no board"
        raise McugenError(
            f"--objective energy needs the board's energy model; {name} has none",
            hint="use --objective cycles, or a board with [energy] in its board.toml",
        )
    extra = (
        0.0
        if paging is None
        else (paging.fast_energy or 0.0) + (paging.slow.energy_pj_per_byte or 0.0)
    )
    cpi = target.board.energy.cycles_per_instruction
    return EnergyPrices(per_cycle * cpi, per_cycle, extra, extra)


def energy_unit(target: Target, unit: str) -> str:
    return f"pJ estimated by {target.board.name}'s [energy] model from {unit}"


def fast_arena(gen: Generated) -> int:
    """The arena's bytes in the board's RAM (all its pools; the fast part when paged)."""
    return gen.plan.paging.fast_bytes if gen.plan.paging is not None else gen.plan.arena_bytes


#: The unit of a schedule's costs without a twin to measure them on.
ESTIMATED = "estimated cycles (multiply-accumulates, or output elements)"


def _plan_within_budget(
    args: argparse.Namespace,
    tg: TrainingGraph,
    planning: PlanOptions,
    target: Target,
    first_sample: list[np.ndarray],
) -> tuple[Generated, ScheduledTraining | None, str]:
    """The plan to build. Without --ram-budget, or when the store-all plan's arena fits it: that
    plan. Else the training graph scheduled to fit (recomputation, and paging modelled with the
    board's own slow memory when it has one), planned again with a tighter schedule budget while
    its arena is over (the schedule counts whole tensors; the planner shares some), and at last
    with the planner's pager for what the arena still cannot hold."""
    if args.ram_budget is None:
        return generate(tg.graph, options=planning), None, ""
    whole = replace(planning, paged=False)
    gen = generate(tg.graph, options=whole)
    if fast_arena(gen) <= args.ram_budget:
        return gen, None, ""
    with tempfile.TemporaryDirectory(prefix="mcugen-costs-") as tmp:
        cycles = operator_instructions(tg.graph, target, first_sample, Path(tmp))
    unit = "instructions measured on the twin" if cycles else ESTIMATED
    page = page_costs(planning.paging)
    energy = energy_prices(args, target, planning.paging)
    unit = energy_unit(target, unit) if energy is not None else unit
    store_all_order = gen.plan.order  # the planner's: it runs each update early
    whole = replace(whole, order="stored")  # the schedule's order, copies next to their readers
    limit = args.ram_budget
    for attempt in range(SCHEDULE_ATTEMPTS):
        budgets = Budgets(
            ram=limit, time=args.runtime_budget, work=args.schedule_work, gap=args.schedule_gap
        )
        try:
            scheduled = schedule_training(
                tg.graph,
                args.scheduler,
                budgets,
                cycles=cycles,
                page=page,
                order=store_all_order,
                energy=energy,
            )
        except ScheduleError:
            if attempt > 0 and planning.paging is not None and not planning.paging.slow.mapped:
                # copies only, no tighter schedule: the pager copies what the last schedule's
                # arena cannot hold (its own error line says so when an operator cannot fit)
                break
            if planning.paging is None or not planning.paging.slow.mapped:
                raise
            # kernels may work on the slow memory in place, which the schedule's model does not
            # know: the pager alone may still fit the budget
            budgets = replace(budgets, ram=None)
            scheduled = schedule_training(
                tg.graph,
                "store_all",
                budgets,
                cycles=cycles,
                page=page,
                order=store_all_order,
                energy=energy,
            )
            note = (
                "no schedule keeps every operand in RAM within the budget; the pager runs "
                f"kernels on {planning.paging.slow.name} in place instead"
            )
            scheduled = replace(scheduled, schedule=replace(scheduled.schedule, note=note))
            break
        gen = generate(scheduled.graph, options=whole)
        over = fast_arena(gen) - args.ram_budget
        if over <= 0:
            return gen, scheduled, unit
        limit -= over
    return generate(scheduled.graph, options=replace(planning, order="stored")), scheduled, unit


#: Schedules tried with tighter budgets before the pager takes the rest.
SCHEDULE_ATTEMPTS = 3


def _schedule_report(
    args: argparse.Namespace, scheduled: ScheduledTraining | None, unit: str
) -> dict[str, Any] | None:
    if scheduled is None:
        return None
    s, o, base = scheduled.schedule, scheduled.outcome, scheduled.store_all
    names = [scheduled.problem.nodes[k].name for st in s.stages for k in st.compute[:-1]]
    return {
        "scheduler": s.solver,
        "ram_budget": args.ram_budget,
        "optimal": s.optimal,
        "lower_bound": s.lower_bound,
        "cost_unit": unit,
        "cost": o.cost,
        "store_all_cost": base.cost,
        "time": o.time,
        "store_all_time": base.time,
        "peak_bytes": o.peak,
        "store_all_peak_bytes": base.peak,
        "recomputed": names,
        "paged_out_bytes": o.paged_out,
        "paged_in_bytes": o.paged_in,
        "note": s.note,
        "baselines": _baselines(args, scheduled),
    }


def _baselines(args: argparse.Namespace, scheduled: ScheduledTraining) -> list[dict[str, Any]]:
    """Recomputation only and paging only (when there is a slow memory) on the same problem and
    budget as the schedule, for comparison (POET's baselines)."""
    from mcugen.train.schedule.pareto import pareto

    if scheduled.budget is None or args.scheduler != "poet" or scheduled.schedule.note:
        return []
    points = pareto(
        scheduled.problem,
        [scheduled.budget],
        work=args.schedule_work,
        gap=args.schedule_gap,
        names=("remat", "paging"),
    )
    return [
        {"scheduler": p.scheduler, "cost": p.cost, "time": p.time if p.cost is not None else None}
        for p in points
    ]


def state_report(gen: Generated, target: Target, linked: FirmwareSizes | None) -> dict[str, Any]:
    """Where the model state lives and what the linked firmware holds: its RAM (.data, .bss and
    stack, the state included when it is there; `planned_ram_bytes`, the fit verdict's figure,
    equals it) and its external RAM section (.mcu_slow: the state, and paging's slots). In the
    external RAM, the cycles modelled for one read and one write of every state byte a step at
    that memory's rates (board.toml), which the twin does not time: QEMU's SDRAM has no wait
    states."""
    state = gen.plan.persistent
    memories = memory_target(target).memories
    memory = next((m for m in memories if m.name == state.memory), None)
    modelled = None
    if memory is not None:
        rate = memory.read_cycles_per_byte + memory.write_cycles_per_byte
        modelled = math.ceil(state.bytes * rate)
    planned = None
    if linked is not None:
        allocator = gen.dynamic.mode if gen.dynamic is not None else dynamic.STATIC
        fit = target_fit(gen.graph, gen.plan, allocator, model_weights(gen), target)
        planned = fit.ram_need
    return {
        "memory": state.memory or "ram",
        "bytes": state.bytes,
        "planned_ram_bytes": planned,
        "ram_bytes": linked.ram_bytes if linked is not None else None,
        "ram_size": target.ram.size if linked is not None else None,
        "slow_section_bytes": linked.slow if linked is not None else None,
        "modelled_access_cycles_per_step": modelled,
    }


def _paging_report(gen: Generated) -> dict[str, Any] | None:
    """What the planner's pager moves per step (mcugen/plan/paging), None when nothing pages."""
    paging = gen.plan.paging
    if paging is None:
        return None
    return {
        "slow_memory": paging.slow.name,
        "fast_bytes": paging.fast_bytes,
        "slow_bytes": paging.slow_bytes,
        "bytes_out_per_step": paging.schedule.bytes_out,
        "bytes_in_per_step": paging.schedule.bytes_in,
        "modelled_cost_per_step": paging.schedule.cycles,
        "modelled_unit": paging.unit,
    }


def _within(sched: dict) -> str:
    """How far the schedule may be from the optimum: its cost over the lower bound."""
    bound = sched["lower_bound"]
    if bound is None:
        return ", no lower bound"
    gap = sched["cost"] - bound
    return f", at most {gap:,} ({100 * gap / max(sched['cost'], 1):.2f} %) above the optimum"


def _report(
    args: argparse.Namespace, tg: TrainingGraph, arena: int, state: int, run: TrainRun
) -> dict[str, Any]:
    figures = epoch_figures(run.segments)
    return {
        "model": str(args.model),
        "board": args.board,
        "emulated": bool(getattr(args, "emulate", False)),
        "trainable": [
            {"operator": i, "opcode": tg.model.operators[i].opcode} for i in tg.trainable
        ],
        "float_operators": list(tg.float_ops),
        "loss_function": tg.loss,
        "steps": len(run.losses),
        "loss": run.losses,
        "epoch_loss": [f.loss for f in figures],
        "epochs": [{"epoch": f.epoch} | _figures(f) for f in figures],
        "final": _figures(figures[-1]),
        "unit": run.unit,
        "per_step": list(run.per_step),
        "arena_bytes": arena,
        "state_bytes": state,
        "stack_used": run.stack_used,
        "stack_bytes": run.stack_bytes,
        "seconds": run.seconds,
        "output": str(args.output) if args.output else None,
        "requantized": bool(args.requantize),
    }


def _figures(f: EpochFigures) -> dict[str, float | None]:
    return {
        "loss": f.loss,
        "accuracy": f.accuracy,
        "held_out_loss": f.held_out_loss,
        "held_out_accuracy": f.held_out_accuracy,
    }


def _held_out_report(
    args: argparse.Namespace, tg: TrainingGraph, held_out: Dataset | None
) -> dict[str, Any] | None:
    if held_out is None:
        return None
    return {
        "data": str(args.val_data),
        "samples": int(held_out.x.shape[0]),
        "every_epoch": held_out_every_epoch(tg),
    }


def _epoch_line(f: dict[str, Any]) -> str:
    """`epoch 2: loss 0.41 (mean), accuracy 87.5 %; held-out loss 0.52, accuracy 83.3 %`."""
    line = f"epoch {f['epoch']}: loss {f['loss']:.6g} (mean)"
    if f["accuracy"] is not None:
        line += f", accuracy {100 * f['accuracy']:.1f} %"
    if f["held_out_loss"] is not None:
        line += f"; held-out loss {f['held_out_loss']:.6g}"
        if f["held_out_accuracy"] is not None:
            line += f", accuracy {100 * f['held_out_accuracy']:.1f} %"
    return line


def _print(r: dict[str, Any]) -> None:
    ops = ", ".join(f"{t['operator']} ({t['opcode']})" for t in r["trainable"])
    where = r["board"] + (" (QEMU twin)" if r["emulated"] else "")
    print(
        f"mcugen: trained operators {ops} of {r['model']} on {where}: {r['steps']} steps, "
        f"{r['loss_function'].replace('_', '-')} loss, in {r['seconds']:.2f} s"
    )
    held_out = r["held_out"]
    if held_out is not None:
        after = (
            "every epoch"
            if held_out["every_epoch"]
            else "the last epoch only (with --accumulate above 1 an evaluation before then would "
            "add to the gradient sums)"
        )
        print(f"  held-out: {held_out['samples']} samples of {held_out['data']}, after {after}")
    for figures in r["epochs"]:
        print(f"  {_epoch_line(figures)}")
    print(f"  loss of the first and last step: {r['loss'][0]:.6g}, {r['loss'][-1]:.6g}")
    if r["per_step"]:
        low, high = min(r["per_step"]), max(r["per_step"])
        span = f"{low:,}" if low == high else f"{low:,} to {high:,}"
        print(f"  per step: {span} {r['unit']}")
    state = r["state"]
    print(
        f"  arena {r['arena_bytes']:,} bytes; state {r['state_bytes']:,} bytes (weights, "
        f"gradient sums, momentum) in {state['memory']}"
        + (f"; stack used {r['stack_used']:,} of {r['stack_bytes']:,}" if r["stack_bytes"] else "")
        + (
            f"; RAM {state['ram_bytes']:,} of {state['ram_size']:,} bytes linked"
            if state["ram_bytes"] is not None
            else ""
        )
    )
    if state["modelled_access_cycles_per_step"] is not None:
        print(
            f"  the state is read and written in place in {state['memory']}: "
            f"{state['modelled_access_cycles_per_step']:,} cycles a step modelled for one read "
            "and one write of each byte, which the twin does not count (QEMU's SDRAM has no "
            "wait states)"
        )
    sched = r.get("schedule")
    if sched:
        print(
            f"  schedule {sched['scheduler']} under {sched['ram_budget']:,} bytes: live peak "
            f"{sched['peak_bytes']:,} (store-all {sched['store_all_peak_bytes']:,}); "
            f"{len(sched['recomputed'])} recomputed operators, paged {sched['paged_out_bytes']:,} "
            f"bytes out and {sched['paged_in_bytes']:,} in; cost {sched['cost']:,} against "
            f"{sched['store_all_cost']:,} {sched['cost_unit']}"
            + (", proven optimal" if sched["optimal"] else _within(sched))
        )
        if sched["cost_unit"].startswith("pJ"):
            print(
                f"  ESTIMATED energy a step: {sched['cost'] / 1e6:,.1f} uJ against store-all's "
                f"{sched['store_all_cost'] / 1e6:,.1f} uJ; time {sched['time']:,} against "
                f"{sched['store_all_time']:,} cycles"
            )
        for b in sched["baselines"]:
            name = {"remat": "recomputation only", "paging": "paging only"}[b["scheduler"]]
            if b["cost"] is None:
                print(f"  baseline {name}: no schedule within {sched['ram_budget']:,} bytes")
                continue
            extra = 100 * (b["cost"] - sched["cost"]) / max(sched["cost"], 1)
            print(
                f"  baseline {name}: cost {b['cost']:,} ({extra:+.1f} % against this schedule), "
                f"time {b['time']:,} cycles"
            )
        if sched["note"]:
            print(f"  note: {sched['note']}")
    paged = r.get("paging")
    if paged:
        print(
            f"  paged per step: {paged['bytes_out_per_step']:,} bytes out to and "
            f"{paged['bytes_in_per_step']:,} in from {paged['slow_memory']} "
            f"({paged['slow_bytes']:,} bytes there; {paged['modelled_cost_per_step']:,.0f} "
            f"{paged['modelled_unit']} modelled for copies and slow accesses, which the twin does "
            "not count)"
        )
    if r["output"]:
        kind = "int8 throughout" if r["requantized"] else "its trained part in float32"
        print(f"  wrote {r['output']} ({kind})")
