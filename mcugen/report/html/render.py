"""Render the report's figures into one self-contained HTML page: inline CSS, inline SVG, the
figures embedded as JSON (`<script type="application/json" id="figures">`), no external request
and no script to run. Returns text; only the command writes files.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2

from mcugen.report.html.charts import memory_bars, operator_chart, timeline_chart, trace_chart

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: colour classes for operator kinds (report.css.j2 defines op-0 .. op-7)
OPCODE_COLOURS = 8


def number(value: Any, decimals: int = 0) -> str:
    """12,345 or 1,234.5: the one way the page writes a figure (tests parse it back)."""
    if value is None:
        return "-"
    return f"{value:,.{decimals}f}" if decimals else f"{round(value):,}"


@functools.cache
def environment() -> jinja2.Environment:
    """One environment per process: Jinja compiles each template once and keeps it (a new
    environment per render compiled them again, 0.1-0.2 s a model)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=True,
    )
    env.filters["num"] = number
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":")}
    return env


def page_view(figures: dict[str, Any]) -> dict[str, Any]:
    """What the template needs besides the figures: the charts' shapes and the bar widths."""
    ops = figures["operators"]
    opcodes = sorted({r["opcode"] for r in ops["rows"]})
    classes = {op: k % OPCODE_COLOURS for k, op in enumerate(opcodes)}
    strategies = figures["strategies"]
    largest = strategies.get("largest_arena") or 1
    return {
        "f": figures,
        "memory_chart": memory_bars(figures["memory"]),
        "timeline_charts": [timeline_chart(t, k) for k, t in enumerate(figures["timelines"])],
        "operator_chart": operator_chart(ops, classes) if ops["ran"] else None,
        "trace_chart": trace_chart(figures["trace"]) if figures["trace"]["measured"] else None,
        "opcode_classes": classes,
        "strategy_bars": [round(100.0 * r["arena_bytes"] / largest, 1) for r in strategies["rows"]],
        "calibration_tag": ("calibrated" if ops.get("estimate_calibrated") else "UNCALIBRATED"),
    }


def render_report(figures: dict[str, Any]) -> str:
    """The page of `figures` (report.html.figures.report_figures)."""
    return environment().get_template("report.html.j2").render(page_view(figures))
