"""Planning a training graph within a RAM budget (`mcugen train`, and `mcugen plan --trainable`):
the schedule of what to keep, recompute or page (mcugen/train/schedule) with the board's costs,
planned again until its arena fits; and the JSON parts that say what it chose."""

from __future__ import annotations

import argparse
import math
import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from mcugen.boards import Target
from mcugen.errors import McugenError
from mcugen.firmware.fits import target_fit
from mcugen.firmware.project import model_weights
from mcugen.firmware.sizes import FirmwareSizes
from mcugen.link.train_run import operator_instructions
from mcugen.model.ir import DTYPES, Graph
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan import dynamic
from mcugen.plan.paging.target import PagingCosts
from mcugen.plan.target import memory_target
from mcugen.train.graph import TrainingGraph
from mcugen.train.schedule import Budgets, ScheduleError
from mcugen.train.schedule.training import (
    EnergyPrices,
    PageCosts,
    ScheduledTraining,
    schedule_training,
)


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


def plan_within_budget(
    args: argparse.Namespace,
    tg: TrainingGraph,
    planning: PlanOptions,
    target: Target,
) -> tuple[Generated, ScheduledTraining | None, str]:
    """The plan to build. Without --ram-budget, or when the store-all plan's arena fits it: that
    plan. Else the training graph scheduled to fit (recomputation, and paging modelled with the
    board's own slow memory when it has one), planned again with a tighter schedule budget while
    its arena is over (the schedule counts whole tensors; the planner shares some), and at last
    with the planner's pager for what the arena still cannot hold. The operators' costs are
    measured on the board's twin (with --emulate) for inputs of zeros, not the user's data, so
    that `mcugen plan --trainable`, which has no data, plans what `mcugen train` builds."""
    if args.ram_budget is None:
        return generate(tg.graph, options=planning), None, ""
    whole = replace(planning, paged=False)
    gen = generate(tg.graph, options=whole)
    if fast_arena(gen) <= args.ram_budget:
        return gen, None, ""
    with tempfile.TemporaryDirectory(prefix="mcugen-costs-") as tmp:
        cycles = operator_instructions(tg.graph, target, zero_inputs(tg.graph), Path(tmp))
    unit = "instructions measured on the twin" if cycles else ESTIMATED
    page = page_costs(planning.paging)
    energy = energy_prices(args, target, planning.paging)
    unit = energy_unit(target, unit) if energy is not None else unit
    store_all_order = gen.plan.order  # the planner's: it runs each update early
    whole = replace(whole, order="stored")  # the schedule's order, copies next to their readers
    schedule = partial(
        schedule_training, tg.graph, cycles=cycles, page=page, order=store_all_order, energy=energy
    )
    limit = args.ram_budget
    for attempt in range(SCHEDULE_ATTEMPTS):
        budgets = Budgets(
            ram=limit, time=args.runtime_budget, work=args.schedule_work, gap=args.schedule_gap
        )
        try:
            scheduled = schedule(args.scheduler, budgets)
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
            scheduled = schedule("store_all", budgets)
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


def zero_inputs(graph: Graph) -> list[np.ndarray]:
    """An input of zeros per model input (a class index of 0, a one-hot of zeros)."""
    return [
        np.zeros(graph.tensors[t].shape, DTYPES[graph.tensors[t].dtype][0]) for t in graph.inputs
    ]


#: Schedules tried with tighter budgets before the pager takes the rest.
SCHEDULE_ATTEMPTS = 3


def schedule_report(
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


def paging_report(gen: Generated) -> dict[str, Any] | None:
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
