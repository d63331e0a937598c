"""`mcugen plan`: plan a model, compare every registered strategy, optionally draw the chart.

Lives outside commands.py so the planning reports can grow without touching the build and run
commands; cli.py points the `plan` sub-command here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mcugen.errors import McugenError
from mcugen.model.tflite_import import load_model
from mcugen.optimize import write_atomic
from mcugen.plan.chart import FORMATS, memory_chart
from mcugen.plan.compare import compare_strategies
from mcugen.plan.memory_plan import plan_memory
from mcugen.report import plan_json, plan_text


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


def cmd_plan(args: argparse.Namespace) -> int:
    chart = getattr(args, "chart", None)
    fmt = chart_format(chart) if chart is not None else ""
    graph = load_model(args.model)
    plan = plan_memory(graph, order=args.order, layout=args.layout)
    runs = compare_strategies(graph, known=[plan]) if getattr(args, "strategies", True) else None
    if chart is not None:
        title = (
            f"{Path(args.model).name}: order {plan.order_strategy}, layout {plan.layout_strategy}"
        )
        write_atomic(chart, memory_chart(plan, fmt, title=title))
    if args.json:
        print(json.dumps(plan_json(graph, plan, runs)))
    else:
        print(plan_text(graph, plan, str(args.model), runs))
        if chart is not None:
            print(f"\nchart written to {chart}")
    return 0
