"""`mcugen plan --patch-curve` / `--patch-chart`: the arena a patch stage reaches against the
MACs it adds, each point planned for real (the pipeline with that MAC budget), not estimated."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from mcugen import progress
from mcugen.model.ir import Graph
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.report.patches import macs_added

#: MAC budgets of the curve (fractions of the model's MACs); 0 is the model run whole.
BUDGETS = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)


@dataclass(frozen=True)
class CurveRow:
    """The plan at one MAC budget: its arena, and the stage kept (grid, operators, MACs added)."""

    budget: float
    arena: int
    macs_added: int
    total_macs: int
    grid: tuple[int, int] | None
    operators: int  # in the stage, as planned whole (0: none kept)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def patch_curve(graph: Graph, options: PlanOptions) -> tuple[CurveRow, ...]:
    """One row per budget of `BUDGETS` (options' own budget added when it is not one of them)."""
    budgets = sorted({*BUDGETS, options.patch_overhead})
    rows = []
    with progress.step("patch curve") as step:
        for k, budget in enumerate(budgets):
            step.update(f"budget {k + 1} of {len(budgets)}")
            _, _, plan = prepare(
                graph, replace(options, patch_overhead=budget, patch_when="always")
            )
            found = plan.patches
            stage = found.stage if found is not None else None
            rows.append(
                CurveRow(
                    budget=budget,
                    arena=plan.arena_bytes,
                    macs_added=macs_added(plan),
                    total_macs=found.total_macs if found else 0,
                    grid=stage.grid if stage else None,
                    operators=len(stage.ops) if stage else 0,
                )
            )
    return tuple(rows)


def patch_budget(plan: MemoryPlan) -> float:
    """The MAC budget `plan` was planned with: 0 when no patch stage was looked for (off, or
    --patch-overhead auto on a model that fits without one)."""
    return plan.patches.budget if plan.patches is not None else 0.0


def curve_table(rows: tuple[CurveRow, ...], chosen: float) -> str:
    """The rows as a text table; `chosen` (the run's budget) is starred."""
    whole = rows[0].arena if rows else 0
    lines = [
        "arena against the MACs a patch stage adds (each budget planned for real; * = this run):",
        "  budget      arena  saved      MACs added  grid  stage ops",
    ]
    for r in rows:
        mark = "*" if r.budget == chosen else " "
        share = f"{100 * r.macs_added / r.total_macs:+.1f} %" if r.total_macs else "-"
        grid = f"{r.grid[0]}x{r.grid[1]}" if r.grid else "-"
        lines.append(
            f"{mark} {100 * r.budget:5.1f} % {r.arena:10d} {whole - r.arena:6d} "
            f"{share:>15s}  {grid:>4s}  {r.operators:9d}"
        )
    return "\n".join(lines)


def curve_chart(rows: tuple[CurveRow, ...], fmt: str, *, title: str, chosen: float) -> bytes:
    """The curve: arena (bytes) over MACs added (% of the model's), each distinct point labelled
    with its grid, the run's budget (`chosen`) drawn in red."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from mcugen.plan.chart import save_figure

    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    xs = [100 * r.macs_added / r.total_macs if r.total_macs else 0.0 for r in rows]
    ys = [r.arena for r in rows]
    ax.plot(xs, ys, marker="o", color="#4c72b0")
    seen = set()
    for x, y, r in zip(xs, ys, rows, strict=True):
        if r.budget == chosen:
            ax.plot([x], [y], marker="o", color="#c44e52", label=f"budget {100 * chosen:g} %")
        if r.grid and (x, y) not in seen:
            seen.add((x, y))
            ax.annotate(f"{r.grid[0]}x{r.grid[1]}", (x, y), textcoords="offset points",
                        xytext=(4, 4), fontsize=7)  # fmt: skip
    ax.set_xlabel("MACs added by the patch stage (% of the model's)")
    ax.set_ylabel("arena (bytes)")
    ax.set_ylim(0, max(ys, default=1) * 1.08)
    ax.set_title(title)
    ax.grid(True, linewidth=0.3)
    ax.legend(fontsize=7, frameon=False)
    return save_figure(fig, fmt)
