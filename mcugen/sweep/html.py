"""A sweep's HTML page: per board, the Pareto plots of arena against latency and against energy
(estimates of the board from the twin's instructions, or from per-MAC costs for `estimate`
jobs), each point a model under an option set, the Pareto-optimal ones joined; then the table.
Plain inline SVG: no script, no plotting library; axes logarithmic when the values span
over 100 times."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any

from mcugen import __version__
from mcugen.sweep.jobs import OK
from mcugen.sweep.table import options_label, results_table

WIDTH, HEIGHT, MARGIN = 460, 300, 56


def points(rows: Sequence[dict[str, Any]], board: str) -> list[dict[str, Any]]:
    """One point per model and option set on `board`: the arena (any job's), and time and
    energy from its run, else its estimate; only those with all three."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        if r["board"] != board or r["status"] != OK:
            continue
        p = merged.setdefault((r["model"], r["options"]), {"label": _label(r)})
        if "arena" in r:
            p.setdefault("arena", r["arena"])
        if "ms" in r and (r["job"] == "run" or "ms" not in p):
            p["ms"], p["uj"] = r["ms"], r.get("uj")
    return [p for _, p in sorted(merged.items()) if {"arena", "ms"} <= p.keys() and p["uj"]]


def _label(r: dict[str, Any]) -> str:
    options = options_label(r["options"])
    return r["model"] if options == "defaults" else f"{r['model']} ({options})"


def pareto(pts: Sequence[dict[str, Any]], y: str) -> list[dict[str, Any]]:
    """The points no other point beats on both arena and `y` (ties: the first by arena, y)."""
    front: list[dict[str, Any]] = []
    for p in sorted(pts, key=lambda p: (p["arena"], p[y], p["label"])):
        if not front or p[y] < front[-1][y]:
            front.append(p)
    return front


def _scale(values: Sequence[float]) -> Callable[[float], float]:
    """Value -> 0..1: logarithmic when the values span over 100 times, else linear."""
    lo, hi = min(values), max(values)
    if lo > 0 and hi / lo > 100:
        lo_log, span = math.log10(lo), math.log10(hi) - math.log10(lo)
        return lambda v: (math.log10(v) - lo_log) / span
    return lambda v: (v - lo) / (hi - lo) if hi > lo else 0.5


def plot(pts: Sequence[dict[str, Any]], y: str, unit: str) -> str:
    """An SVG scatter of arena bytes (x) against `y`, the Pareto front joined and labelled."""
    if not pts:
        return "<p>no point with an arena and an estimate</p>"
    xs, ys = [p["arena"] for p in pts], [p[y] for p in pts]
    fx, fy = _scale(xs), _scale(ys)

    def at(p: dict[str, Any]) -> tuple[float, float]:
        return (
            MARGIN + fx(p["arena"]) * (WIDTH - 2 * MARGIN),
            HEIGHT - MARGIN - fy(p[y]) * (HEIGHT - 2 * MARGIN),
        )

    front = pareto(pts, y)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}">']
    parts.append(
        f'<line x1="{MARGIN}" y1="{HEIGHT - MARGIN}" x2="{WIDTH - MARGIN}" y2="{HEIGHT - MARGIN}" '
        f'stroke="black"/><line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" '
        f'y2="{HEIGHT - MARGIN}" stroke="black"/>'
    )
    parts.append(
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 16}" text-anchor="middle">arena bytes '
        f"({min(xs):,} to {max(xs):,})</text>"
        f'<text x="14" y="{HEIGHT / 2}" transform="rotate(-90 14 {HEIGHT / 2})" '
        f'text-anchor="middle">{unit} ({min(ys):,.3g} to {max(ys):,.3g})</text>'
    )
    line = " ".join(f"{at(p)[0]:.1f},{at(p)[1]:.1f}" for p in front)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#c33" stroke-width="1.5"/>')
    for p in pts:
        cx, cy = at(p)
        colour = "#c33" if p in front else "#357"
        tip = html.escape(f"{p['label']}: arena {p['arena']:,} B, {p[y]:,} {unit}")
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{colour}">'
            f"<title>{tip}</title></circle>"
        )
        if p in front:
            name = html.escape(p["label"].removesuffix(".tflite")[:28])
            parts.append(f'<text x="{cx + 6:.1f}" y="{cy - 6:.1f}" font-size="10">{name}</text>')
    parts.append("</svg>")
    return "".join(parts)


def page(rows: Sequence[dict[str, Any]], summary: str) -> str:
    """The whole page: per board the two plots and its Pareto-optimal points, then the tables."""
    body = [
        f"<h1>mcugen sweep</h1><p>mcugen {html.escape(__version__)}: {len(rows)} results. "
        "Latency and energy are the boards' estimates (from the twin's instructions at the "
        "board's cycles per instruction, or from per-MAC costs for estimate jobs), not "
        "measurements. Red points are Pareto-optimal.</p>"
    ]
    for board in sorted({r["board"] for r in rows}):
        pts = points(rows, board)
        body.append(f"<h2>{html.escape(board)}</h2><div>")
        body.append(plot(pts, "ms", "ms"))
        body.append(plot(pts, "uj", "uJ"))
        body.append("</div><ul>")
        body += [
            f"<li>{html.escape(p['label'])}: arena {p['arena']:,} B, {p['ms']:,} ms, "
            f"{p['uj']:,} uJ</li>"
            for p in pareto(pts, "ms")
        ]
        body.append("</ul>")
    body.append(f"<h2>Summary</h2><pre>{html.escape(summary)}</pre>")
    body.append(f"<h2>Results</h2><pre>{html.escape(results_table(rows))}</pre>")
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>mcugen sweep</title></head>'
        "<body>" + "\n".join(body) + "</body></html>\n"
    )
