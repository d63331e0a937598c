"""`mcugen plan`: plan a model, compare every registered strategy, optionally draw the chart, and
with --board say whether it fits (the verdict of mcugen/plan/fit.py; exit 3 when it does not).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from mcugen.boards import MLPERF_MODES, Target, load_board, resolve_target, with_mlperf_mode
from mcugen.commands._common import load_for, plan_options
from mcugen.commands._options import (
    mlperf_mode_option,
    model_options,
    partition_options,
    plan_report_options,
    positive,
    schedule_options,
    training_options,
)
from mcugen.commands._patch_curve import curve_chart, curve_table, patch_budget, patch_curve
from mcugen.errors import McugenError
from mcugen.figures import Planned as Planned
from mcugen.figures import linked_fit
from mcugen.figures import plan_model as plan_model
from mcugen.figures import strategy_runs as strategy_runs
from mcugen.model.ir import Graph
from mcugen.options import PlanOptions
from mcugen.outputs import write_file
from mcugen.plan.chart import FORMATS, memory_chart
from mcugen.plan.fit import Fit
from mcugen.plan.memo import remembering
from mcugen.report.text import plan_json, plan_text
from mcugen.train.graph import TrainingGraph


def chart_format(path: Path) -> str:
    """ "png" or "svg" from the file name; a clear error otherwise."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise McugenError(
            f"cannot tell the chart format from '{path.suffix or path.name}'",
            where=str(path),
            hint="name the chart file *.png or *.svg",
        )
    return fmt


HELP = "plan the arena of a model and report it"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (
    ("chart", "file"),
    ("patch_chart", "file"),
    ("pareto_chart", "file"),
)


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p, board=False, with_pools=True)
    p.add_argument(
        "--board",
        default=None,
        help="also say whether arena and weights fit this board (exit 3 if not)",
    )
    p.add_argument(
        "--emulate",
        action="store_true",
        help="with --board: the verdict for the board's QEMU twin, as build/run --emulate build",
    )
    mlperf_mode_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    training_options(p, trainable=None)
    p.add_argument(
        "--pareto",
        type=positive,
        default=None,
        metavar="POINTS",
        help="with --trainable: the cost of a training step against the RAM budget, at POINTS "
        "budgets from the store-all peak down, for the poet, remat and paging schedulers",
    )
    p.add_argument(
        "--pareto-chart", type=Path, default=None, help="with --pareto: draw it (*.png or *.svg)"
    )
    p.add_argument(
        "--patch-curve",
        action="store_true",
        help="also plan the model at MAC budgets from 0 to 50 %% and print the arena each "
        "patch stage reaches (slow: one plan per budget)",
    )
    p.add_argument(
        "--patch-chart",
        type=Path,
        default=None,
        help="draw the --patch-curve (*.png or *.svg); implies --patch-curve",
    )
    schedule_options(p)
    p.add_argument(
        "--timings",
        action="store_true",
        help="add planning times to the JSON (without them it is byte-identical from run to run)",
    )
    plan_report_options(p)
    partition_options(p)


def cmd_plan(args: argparse.Namespace) -> int:
    if getattr(args, "partition", None) is not None:
        from mcugen.plan.partition import PARTITIONERS

        PARTITIONERS.get(args.partition)  # the registry's one-line error for an unknown name
        if getattr(args, "boards", None) is None:
            raise McugenError("--partition spreads the model over --boards", hint="add --boards")
    if getattr(args, "boards", None) is not None:
        if getattr(args, "board", None) is not None:
            raise McugenError("--board and --boards together", hint="use one of them")
        from mcugen.commands._partition import cmd_partition

        return cmd_partition(args)
    chart = getattr(args, "chart", None)
    fmt = chart_format(chart) if chart is not None else ""
    if getattr(args, "pareto", None) and getattr(args, "trainable", None) is None:
        raise McugenError("--pareto plans training schedules", hint="add --trainable last:K")
    if getattr(args, "pareto_chart", None) is not None:
        if not getattr(args, "pareto", None):
            raise McugenError("--pareto-chart draws --pareto", hint="add --pareto 6")
        chart_format(args.pareto_chart)
    patch_chart = getattr(args, "patch_chart", None)
    if patch_chart is not None:
        chart_format(patch_chart)
    if getattr(args, "trainable", None) is not None and (
        patch_chart is not None or getattr(args, "patch_curve", False)
    ):
        raise McugenError(
            "--patch-curve plans inference, not --trainable", hint="leave one of them out"
        )
    original = load_for(args)
    board = getattr(args, "board", None)
    target = _target_of(args) if board else None
    options = plan_options(args, firmware=board not in (None, "host"), target=target)
    schedule = None
    if getattr(args, "trainable", None) is not None:
        # the training graph as `mcugen train` plans it; TFLM's row below is then the plain
        # store-all schedule (stored order, greedy by size, nothing shared)
        from mcugen.commands.train import train_options
        from mcugen.train.graph import build_training_graph

        training = build_training_graph(original, train_options(args))
        original = training.graph
        options = replace(options, rewrites=False)
        if options.ram_budget is not None:
            original, planned, schedule = _scheduled(args, training, options, target)
    # the strategy rows re-plan orders the default plan laid out: each layout made once
    with remembering():
        if schedule is None:
            planned = plan_model(original, options)
            if planned.plan.channel_slices:  # what writing the slices in place saved
                without = plan_model(original, replace(options, concat_in_place=False)).plan
                slices = replace(planned.plan, arena_without_slices=without.arena_bytes)
                planned = replace(planned, plan=slices)
        graph, plan, unsupported = planned.graph, planned.plan, planned.unsupported
        note = (
            f"planned without kernel scratch, rewrites or in-place operators: {unsupported}"
            if unsupported
            else ""
        )
        runs = None
        if getattr(args, "strategies", True):
            in_place = not note and not getattr(args, "no_inplace", False)
            runs = strategy_runs(original, planned, in_place=in_place)
    if chart is not None:
        title = (
            f"{Path(args.model).name}: order {plan.order_strategy}, layout {plan.layout_strategy}"
        )
        write_file(chart, memory_chart(plan, fmt, title=title))
    fit = board_fit(args, planned, options)
    curve = _pareto(args, original, target) if getattr(args, "pareto", None) else None
    patch_rows = None
    if getattr(args, "patch_curve", False) or patch_chart is not None:
        patch_rows = patch_curve(original, options)
    if patch_chart is not None and patch_rows is not None:
        title = f"{Path(args.model).name}: patch stages"
        write_file(
            patch_chart,
            curve_chart(
                patch_rows, chart_format(patch_chart), title=title, chosen=patch_budget(plan)
            ),
        )
    if args.json:
        report = plan_json(graph, plan, runs, timings=args.timings)
        if fit is not None:
            report["fit"] = fit.as_json()
        if curve is not None:
            report["pareto"] = [asdict(p) for p in curve[0]]
        if patch_rows is not None:
            report["patch_curve"] = [r.as_json() for r in patch_rows]
        if schedule is not None:
            report["schedule"] = schedule
        print(json.dumps(report))
    else:
        print(plan_text(graph, plan, str(args.model), runs))
        if note:
            print(f"\nnote: {note}")
        if chart is not None:
            print(f"\nchart written to {chart}")
        if schedule is not None:
            print(f"\n{schedule_text(schedule)}")
        if fit is not None:
            print(f"\n{fit.summary()}")
        if curve is not None:
            print(curve[1])
        if patch_rows is not None:
            print("\n" + curve_table(patch_rows, patch_budget(plan)))
        if patch_chart is not None:
            print(f"\npatch curve chart written to {patch_chart}")
    problem = fit.problem() if fit is not None else None
    if problem is not None:
        raise problem
    return 0


def _scheduled(
    args: argparse.Namespace, training: TrainingGraph, options: PlanOptions, target: Target | None
) -> tuple[Graph, Planned, dict[str, Any] | None]:
    """`--trainable` under `--ram-budget`: the training step scheduled (what to keep, recompute
    or page) and planned exactly as `mcugen train` does with the same flags (the operators'
    costs measured on the twin with --emulate), as (the scheduled graph, its plan, the
    schedule's report; None when the store-all plan meets the budget)."""
    from mcugen.commands._training import plan_within_budget, schedule_report

    on = target if target is not None else resolve_target(load_board("host"), emulate=False)
    gen, scheduled, unit = plan_within_budget(args, training, options, on)
    planned = Planned(gen.graph, gen.plan, gen.lowered, options=options)
    return gen.graph, planned, schedule_report(args, scheduled, unit) or {}


def schedule_text(schedule: dict[str, Any]) -> str:
    """The training schedule in one line (`mcugen train` prints the same figures)."""
    if not schedule:
        return "training step: store-all plan within the RAM budget (nothing recomputed or paged)"
    recomputed = ", ".join(schedule["recomputed"]) or "nothing"
    return (
        f"training step: scheduler {schedule['scheduler']}, recomputed {recomputed}, paged out "
        f"{schedule['paged_out_bytes']:,} bytes; cost {schedule['cost']:,} against store-all's "
        f"{schedule['store_all_cost']:,} ({schedule['cost_unit']})"
        + (f"; {schedule['note']}" if schedule["note"] else "")
    )


def _pareto(args: argparse.Namespace, graph: Graph, target: Target | None) -> tuple[list, str]:
    """`--pareto`: a training step's estimated cost against the RAM budget (train/schedule), as
    (points, text); draws the chart with --pareto-chart."""
    from mcugen.commands._training import ESTIMATED, energy_prices, energy_unit, page_costs
    from mcugen.plan.target import memory_target
    from mcugen.train.schedule.pareto import budgets, pareto, pareto_chart, pareto_table
    from mcugen.train.schedule.training import estimated_cycles, training_problem

    order = plan_model(graph, replace(plan_options(args), rewrites=False)).plan.order
    paging = memory_target(target).paging_costs("auto") if target is not None else None
    page = page_costs(paging)
    energy = energy_prices(args, target, paging)
    problem = training_problem(graph, estimated_cycles(graph), page, order, energy)
    points = pareto(
        problem, budgets(problem, args.pareto), work=args.schedule_work, gap=args.schedule_gap
    )
    unit = "estimated cycles" if energy is None or target is None else "estimated pJ"
    where = f"to {target.board.name}'s slow memory" if page and target else "not offered"
    text = (
        "\ntraining step against the RAM budget: "
        + (energy_unit(target, ESTIMATED) if energy is not None and target else ESTIMATED)
        + f"; paging {where}; budgets in live "
        "bytes as the schedule counts them (whole tensors, no sharing)\n"
        + pareto_table(points, unit)
    )
    if args.pareto_chart is not None:
        title = f"{Path(args.model).name} --trainable {args.trainable}"
        fmt = chart_format(args.pareto_chart)
        write_file(args.pareto_chart, pareto_chart(points, fmt, title=title, unit=unit))
        text += f"\n\nchart written to {args.pareto_chart}"
    return points, text


def _target_of(args: argparse.Namespace) -> Target:
    """`--board`, on its twin with `--emulate`, in the MLPerf Tiny mode of `--mlperf-mode` (the
    energy mode's firmware links other code), as `build` resolves it."""
    target = resolve_target(load_board(args.board), emulate=bool(getattr(args, "emulate", False)))
    mode = getattr(args, "mlperf_mode", MLPERF_MODES[0])
    return target if mode == MLPERF_MODES[0] else with_mlperf_mode(target, mode)


def board_fit(args: argparse.Namespace, planned: Planned, options: PlanOptions) -> Fit | None:
    """The plan against `--board`'s RAM and flash, or None without `--board` (or with the
    host). A model the runtime can run is rendered and linked as `mcugen build` would (for the
    board itself, not its twin), so flash counts code and tables too; RAM is the planner's
    count, which the linked firmware's equals (tests/unit/test_fit.py, benchmarks/fit.py)."""
    if getattr(args, "board", None) is None:
        return None
    target = _target_of(args)
    if target.board.is_host:  # as without --board: the host has no limits to check against
        return None
    return linked_fit(replace(planned, options=options), target, Path(args.model).stem)
