"""Memory-over-time chart of a plan: a pure function returning PNG or SVG bytes (matplotlib, Agg).

x is the step (0 = the subgraph inputs, k = the k-th operator of the order), y the arena offset.
Each buffer is a rectangle from its first to its last step, labelled `t<index>` (a tensor; views
sharing it are listed after a `=`) or `s<op>` (an operator's scratch). Horizontal lines: the
arena size, the peak live bytes of this order and the proven bound on any order.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from mcugen.plan.buffers import Buffer  # noqa: E402
from mcugen.plan.memory_plan import MemoryPlan  # noqa: E402

FORMATS = ("png", "svg")
_COLOURS = ("#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd", "#8c8c8c")


def buffer_label(b: Buffer) -> str:
    if b.scratch_of >= 0:
        return f"s{b.scratch_of}"
    names = [t for t, _ in b.tensor_placements()]
    return f"t{names[0]}" + "".join(f"={t}" for t in names[1:])


def memory_chart(plan: MemoryPlan, fmt: str = "png", *, title: str = "") -> bytes:
    """The chart of `plan` as `fmt` ("png" or "svg") bytes; deterministic for a given plan."""
    if fmt not in FORMATS:
        raise ValueError(f"chart format {fmt!r}: choose one of {', '.join(FORMATS)}")
    steps = len(plan.order)
    fig = Figure(figsize=(min(6 + 0.08 * steps, 24), 7), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    font = max(3.0, 8.0 - len(plan.buffers) / 40)
    for b in plan.buffers:
        _draw_buffer(ax, b, plan.offsets[b.id], font)
    top = max(plan.arena_bytes, plan.order_lower_bound, 1)
    for y, style, label in (
        (plan.arena_bytes, "-", f"arena {plan.arena_bytes} B"),
        (plan.lower_bound, "--", f"peak live bytes of this order {plan.lower_bound} B"),
        (
            plan.order_lower_bound,
            ":",
            f"lower bound, any order, no sharing {plan.order_lower_bound} B",
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
    fig.tight_layout()
    out = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "mcugen", "svg.fonttype": "none"}):
        meta = {"Date": None} if fmt == "svg" else {"Software": None}
        fig.savefig(out, format=fmt, metadata=meta)
    return out.getvalue()


def _draw_buffer(ax: object, b: Buffer, offset: int, font: float) -> None:
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
