"""Chart geometry for the HTML report: each chart is a list of plain shapes (rectangles, lines,
polylines, texts) in SVG user units, computed from the figures; the template only writes them
out. Pure functions, deterministic, no markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

WIDTH = 960
#: plot margins: left (y axis labels), right (second axis), top, bottom (x axis labels)
LEFT, RIGHT, TOP, BOTTOM = 78, 78, 26, 34


@dataclass(frozen=True)
class Shape:
    """One SVG element: `kind` is rect, line, text or polyline; `title` a tooltip."""

    kind: str
    cls: str = ""
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    x2: float = 0.0
    y2: float = 0.0
    text: str = ""
    title: str = ""
    anchor: str = "start"
    points: str = ""


@dataclass(frozen=True)
class Chart:
    id: str
    width: int
    height: int
    label: str  # what the chart shows, for screen readers and tests
    shapes: tuple[Shape, ...]


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """0 and round values (1, 2 or 5 times a power of ten) up to at least `top`."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    n = math.ceil(top / step - 1e-9)
    return [k * step for k in range(n + 1)]


def short(value: float) -> str:
    """An axis label: 950, 12k, 1.5M (decimal units)."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= div:
            return f"{value / div:.3g}{suffix}"
    return f"{value:.3g}"


def _r(v: float) -> float:
    return round(v, 2)


def _y_axis(ticks: list[float], y_of: Any, x: float, right: bool, unit: str) -> list[Shape]:
    shapes = []
    for t in ticks:
        y = _r(y_of(t))
        if not right:
            shapes.append(Shape("line", "grid", x, y, x2=WIDTH - RIGHT, y2=y))
        shapes.append(
            Shape("text", "tick", x + (6 if right else -6), y + 4, text=short(t),
                  anchor="start" if right else "end")
        )  # fmt: skip
    label_x = WIDTH - 8 if right else 14
    shapes.append(Shape("text", "axis-label", label_x, 11, text=unit,
                        anchor="end" if right else "start"))  # fmt: skip
    return shapes


def _x_ticks(n: int, x_of: Any, y: float, start: int = 0) -> list[Shape]:
    step = max(1, math.ceil(n / 16))
    return [
        Shape("text", "tick", _r(x_of(k)), y + 16, text=str(k + start), anchor="middle")
        for k in range(0, n, step)
    ]


def memory_bars(memory: dict[str, Any]) -> Chart:
    """Flash and RAM, each a horizontal bar of its parts against its limit (the bar's full
    width is the limit, or the need when it is over)."""
    row_h, gap, label_w = 30, 22, 64
    top = 10
    plot_w = WIDTH - label_w - 20
    shapes: list[Shape] = []
    for row, name in enumerate(("flash", "ram")):
        m = memory[name]
        y = top + row * (row_h + gap)
        full = max(m["limit"], m["used"], 1)
        scale = plot_w / full
        shapes.append(Shape("text", "row-label", label_w - 8, y + row_h / 2 + 5,
                            text="RAM" if name == "ram" else "flash", anchor="end"))  # fmt: skip
        x = float(label_w)
        for k, part in enumerate(m["parts"]):
            w = part["bytes"] * scale
            share = 100.0 * part["bytes"] / m["limit"] if m["limit"] else 0.0
            title = f"{part['name']}: {part['bytes']:,} bytes ({share:.1f} % of {name})"
            shapes.append(Shape("rect", f"part part-{k}", _r(x), y, _r(w), row_h, title=title))
            if w > 8 * len(part["name"]) + 8:
                shapes.append(Shape("text", "in-bar", _r(x + w / 2), y + row_h / 2 + 5,
                                    text=part["name"], anchor="middle"))  # fmt: skip
            x += w
        limit_x = label_w + m["limit"] * scale
        if m["used"] < m["limit"]:
            free = m["limit"] - m["used"]
            shapes.append(Shape("rect", "free", _r(x), y, _r(limit_x - x), row_h,
                                title=f"free: {free:,} bytes"))  # fmt: skip
        else:
            over = m["used"] - m["limit"]
            shapes.append(Shape("rect", "over", _r(limit_x), y, _r(x - limit_x), row_h,
                                title=f"over by {over:,} bytes"))  # fmt: skip
        shapes.append(Shape("line", "limit", _r(limit_x), y - 4, x2=_r(limit_x), y2=y + row_h + 4))
        share = 100.0 * m["used"] / m["limit"] if m["limit"] else 0.0
        shapes.append(Shape("text", "bar-share", _r(max(x, label_w) + 6), y + row_h / 2 + 5,
                            text=f"{share:.1f} %" if x < limit_x - 60 else ""))  # fmt: skip
    height = top + 2 * row_h + gap + 10
    return Chart("chart-memory", WIDTH, height, "flash and RAM by part", tuple(shapes))


def _frame(height: int) -> tuple[float, float]:
    return float(WIDTH - LEFT - RIGHT), float(height - TOP - BOTTOM)


def timeline_chart(t: dict[str, Any], index: int) -> Chart:
    """Live bytes at each step as bars, the pool's size and peak as lines."""
    height = 250
    plot_w, plot_h = _frame(height)
    live: list[int] = t["live"]
    n = max(len(live), 1)
    top_value = max([t["size"], t["peak"], 1] + ([t["room"]] if t["room"] else []))
    ticks = nice_ticks(top_value)

    def y_of(v: float) -> float:
        return TOP + plot_h * (1 - v / ticks[-1])

    def x_of(k: float) -> float:
        return LEFT + plot_w * (k + 0.5) / n

    shapes = _y_axis(ticks, y_of, LEFT, False, "bytes")
    bar = plot_w / n
    for k, v in enumerate(live):
        cls = "bar peak" if k == t["peak_step"] else "bar"
        title = f"step {k}: {t['labels'][k]}: {v:,} live bytes"
        shapes.append(
            Shape(
                "rect",
                cls,
                _r(LEFT + k * bar + bar * 0.1),
                _r(y_of(v)),
                _r(max(bar * 0.8, 0.6)),
                _r(TOP + plot_h - y_of(v)),
                title=title,
            )
        )
    lines = [(t["size"], "size", f"{t['pool']} {t['size']:,} B")]
    if t["peak"] != t["size"]:
        lines.append((t["peak"], "peak-line", f"peak live {t['peak']:,} B"))
    if t["room"] and t["room"] != t["size"]:
        lines.append((t["room"], "room", f"room {t['room']:,} B"))
    for value, cls, text in lines:
        y = _r(y_of(value))
        shapes.append(Shape("line", cls, LEFT, y, x2=WIDTH - RIGHT, y2=y))
        shapes.append(Shape("text", f"{cls}-label", WIDTH - RIGHT + 4, y + 4, text=text))
    shapes += _x_ticks(len(live), x_of, TOP + plot_h)
    label = f"live bytes over the steps in {t['pool']}"
    return Chart(f"chart-timeline-{index}", WIDTH, height, label, tuple(shapes))


def operator_chart(ops: dict[str, Any], opcode_classes: dict[str, int]) -> Chart:
    """Each operator's count as a bar at its step; a second axis in estimated microjoules when
    the board has an energy model (the estimate is proportional to the count)."""
    height = 250
    plot_w, plot_h = _frame(height)
    rows = ops["rows"]
    n = max(len(rows), 1)
    ticks = nice_ticks(max([r["count"] for r in rows] + [1]))

    def y_of(v: float) -> float:
        return TOP + plot_h * (1 - v / ticks[-1])

    def x_of(k: float) -> float:
        return LEFT + plot_w * (k + 0.5) / n

    shapes = _y_axis(ticks, y_of, LEFT, False, ops["unit"])
    bar = plot_w / n
    for k, r in enumerate(rows):
        uj = f", ~{r['estimate_uj']:,.1f} uJ (ESTIMATE)" if r["estimate_uj"] is not None else ""
        title = (
            f"step {r['step']}: {r['opcode']} (op {r['operator']}), {r['kernel']}: "
            f"{r['count']:,} {ops['unit']}{uj}"
        )
        cls = f"opbar op-{opcode_classes[r['opcode']]}"
        shapes.append(Shape("rect", cls, _r(LEFT + k * bar + bar * 0.1), _r(y_of(r["count"])),
                            _r(max(bar * 0.8, 0.6)), _r(TOP + plot_h - y_of(r["count"])),
                            title=title))  # fmt: skip
    counts = sum(r["count"] for r in rows)
    ujs = [r["estimate_uj"] for r in rows if r["estimate_uj"] is not None]
    if ujs and counts:
        per = sum(ujs) / counts  # uJ per counted instruction, the same for every operator
        right = nice_ticks(ticks[-1] * per)
        shapes += _y_axis(
            [v for v in right if v <= ticks[-1] * per * 1.0001],
            lambda v: y_of(v / per),
            WIDTH - RIGHT,
            True,
            "uJ (est.)",
        )
    shapes += _x_ticks(len(rows), x_of, TOP + plot_h, start=rows[0]["step"] if rows else 0)
    return Chart("chart-operators", WIDTH, height, f"{ops['unit']} per operator", tuple(shapes))


def trace_chart(trace: dict[str, Any]) -> Chart:
    """Current over time as a polyline, the GPIO marks as vertical lines."""
    height = 250
    plot_w, plot_h = _frame(height)
    points: Sequence[Sequence[float]] = trace["points"]
    x_ticks = nice_ticks(max(trace["ms"], 1e-3), 8)
    y_ticks = nice_ticks(max(trace["peak_ma"], 1e-3))

    def x_of(ms: float) -> float:
        return LEFT + plot_w * ms / x_ticks[-1]

    def y_of(ma: float) -> float:
        return TOP + plot_h * (1 - ma / y_ticks[-1])

    shapes = _y_axis(y_ticks, y_of, LEFT, False, "mA")
    for t in x_ticks:
        shapes.append(Shape("text", "tick", _r(x_of(t)), TOP + plot_h + 16, text=short(t),
                            anchor="middle"))  # fmt: skip
    shapes.append(Shape("text", "axis-label", WIDTH - RIGHT, height - 2, text="ms", anchor="end"))
    line = " ".join(f"{_r(x_of(ms))},{_r(y_of(ma))}" for ms, ma in points)
    shapes.append(Shape("polyline", "trace", points=line))
    for k, ms in enumerate(trace["marks_ms"]):
        x = _r(x_of(ms))
        shapes.append(Shape("line", "mark", x, TOP, x2=x, y2=TOP + plot_h,
                            title=f"mark {k} at {ms:,.3f} ms"))  # fmt: skip
        shapes.append(Shape("text", "mark-label", x + 3, TOP + 10, text=f"m{k}"))
    return Chart("chart-trace", WIDTH, height, "current over time", tuple(shapes))
