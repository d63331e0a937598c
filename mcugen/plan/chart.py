"""Memory-over-time chart of a plan: a pure function returning PNG or SVG bytes (matplotlib, Agg).

x is the step (0 = the subgraph inputs, k = the k-th operator of the order), y the arena offset.
Each buffer is a rectangle from its first to its last step, labelled `t<index>` (a tensor; views
sharing it are listed after a `=`) or `s<op>` (an operator's scratch). Horizontal lines: the
arena size, the peak live bytes of this order and the proven bound on any order.
A paged plan (plan/paging) is drawn as its fast memory over time instead: each episode of a buffer
in fast memory at its offset there, the budget line, and below it the bytes paged in and out
before each step.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from mcugen.plan.buffers import Buffer
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.paging.schedule import Memory

if TYPE_CHECKING:  # matplotlib is imported when a chart is drawn (it costs 0.5 s at start-up)
    from matplotlib.figure import Figure

FORMATS = ("png", "svg")
_COLOURS = ("#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd", "#8c8c8c")


def buffer_label(b: Buffer) -> str:
    if b.scratch_of >= 0:
        return f"s{b.scratch_of}"
    names = [t for t, _ in b.tensor_placements()]
    return f"t{names[0]}" + "".join(f"={t}" for t in names[1:])


def memory_chart(plan: MemoryPlan, fmt: str = "png", *, title: str = "") -> bytes:
    """The chart of `plan` as `fmt` ("png" or "svg") bytes; deterministic for a given plan."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if fmt not in FORMATS:
        raise ValueError(f"chart format {fmt!r}: choose one of {', '.join(FORMATS)}")
    steps = len(plan.order)
    fig = Figure(figsize=(min(6 + 0.08 * steps, 24), 7), dpi=100)
    FigureCanvasAgg(fig)
    if plan.paging is not None:
        _paging_axes(fig, plan, title)
        return save_figure(fig, fmt)
    ax = fig.add_subplot(1, 1, 1)
    font = max(3.0, 8.0 - len(plan.buffers) / 40)
    for b in plan.buffers:
        _draw_buffer(ax, b, plan.offsets[b.id], font)
    top = max(plan.arena_bytes, 1)
    for y, style, label in (
        (plan.arena_bytes, "-", f"arena {plan.arena_bytes} B"),
        (plan.lower_bound, "--", f"peak live bytes of this order {plan.lower_bound} B"),
        (
            plan.arena_lower_bound,
            ":",
            f"lower bound, any plan of the graph {plan.arena_lower_bound} B",
        ),
    ):
        if y > 0:
            ax.axhline(y, color="black", linestyle=style, linewidth=1.0, label=label)
    ax.set_xlim(-0.5, steps + 0.5)
    ax.set_ylim(0, top * 1.08)
    ax.set_xlabel("step (operator position in the order; 0 = inputs)")
    ax.set_ylabel("arena offset (bytes)")
    ax.set_title(title or f"order {plan.order_strategy}, layout {plan.layout_strategy}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, fontsize=7, frameon=False)
    return save_figure(fig, fmt)


def save_figure(fig: Figure, fmt: str) -> bytes:
    """A figure as deterministic `fmt` bytes (no dates, a fixed SVG hash salt)."""
    import matplotlib

    fig.tight_layout()
    out = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "mcugen", "svg.fonttype": "none"}):
        meta = {"Date": None} if fmt == "svg" else {"Software": None}
        fig.savefig(out, format=fmt, metadata=meta)
    return out.getvalue()


def _paging_axes(fig: Figure, plan: MemoryPlan, title: str) -> None:
    """Fast memory over time (episodes at their offsets, the budget) over the traffic per step."""
    from matplotlib.patches import Rectangle

    paging = plan.paging
    assert paging is not None
    steps = len(plan.order)
    ax, traffic = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": (3, 1)})
    labels = {b.id: buffer_label(b) for b in plan.buffers}
    font = max(3.0, 8.0 - len(plan.buffers) / 40)
    for e in paging.schedule.episodes:
        if e.memory != Memory.FAST:
            continue
        size = paging.problem.index[e.buffer].size
        colour = _COLOURS[e.buffer % len(_COLOURS)]
        ax.add_patch(
            Rectangle((e.first - 0.45, e.offset), e.last - e.first + 0.9, size,
                      facecolor=colour, edgecolor="black", lw=0.4, alpha=0.8)
        )  # fmt: skip
        ax.text(e.first + (e.last - e.first) / 2, e.offset + size / 2, labels[e.buffer],
                ha="center", va="center", fontsize=font, clip_on=True)  # fmt: skip
    ax.axhline(paging.capacity, color="black", linewidth=1.0, label=f"budget {paging.capacity} B")
    ax.set_ylim(0, max(paging.capacity, paging.fast_bytes, 1) * 1.08)
    ax.set_ylabel("fast memory offset (bytes)")
    ax.set_title(
        title
        or f"paged: {paging.schedule.bytes_in + paging.schedule.bytes_out} B of traffic, "
        f"{paging.slow_bytes} B in {paging.slow.name}"
    )
    ax.legend(loc="upper right", fontsize=7, frameon=False)
    rows = paging.traffic()
    traffic.bar([s - 0.2 for s, _, _ in rows], [i for _, i, _ in rows], 0.4, label="paged in")
    traffic.bar([s + 0.2 for s, _, _ in rows], [o for _, _, o in rows], 0.4, label="paged out")
    traffic.set_xlim(-0.5, steps + 0.5)
    traffic.set_xlabel("step (operator position in the order; 0 = inputs)")
    traffic.set_ylabel("bytes before the step")
    traffic.legend(loc="upper right", fontsize=7, frameon=False)


def _draw_buffer(ax: object, b: Buffer, offset: int, font: float) -> None:
    from matplotlib.patches import Rectangle

    colour = "#dddddd" if b.scratch_of >= 0 else _COLOURS[b.id % len(_COLOURS)]
    for first, last, size in b.segments():  # one rectangle per run of equal extent
        ax.add_patch(  # type: ignore[attr-defined]
            Rectangle(
                (first - 0.45, offset),
                last - first + 0.9,
                size,
                facecolor=colour,
                edgecolor="black",
                lw=0.4,
                alpha=0.8,
            )
        )
    x, width = b.first - 0.45, b.last - b.first + 0.9
    ax.text(  # type: ignore[attr-defined]
        x + width / 2,
        offset + min(size for _, _, size in b.segments()) / 2,
        buffer_label(b),
        ha="center",
        va="center",
        fontsize=font,
        clip_on=True,
    )
