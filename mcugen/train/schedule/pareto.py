"""The cost of training against the RAM budget: each scheduler's schedule at budgets from the
store-all peak down to what the largest operator needs with its inputs (POET's Pareto curve), as
a table's rows and a chart (matplotlib, Agg; deterministic bytes for the same points)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcugen import progress
from mcugen.train.schedule import SCHEDULERS as REGISTRY
from mcugen.train.schedule.baselines import store_all
from mcugen.train.schedule.cpsat import least_ram
from mcugen.train.schedule.problem import Budgets, ScheduleError, ScheduleProblem
from mcugen.train.schedule.program import simulate

SCHEDULERS = ("poet", "remat", "paging")


@dataclass(frozen=True)
class Point:
    scheduler: str
    budget: int
    cost: int | None  # None: no schedule found
    peak: int = 0
    recomputed: int = 0
    paged: int = 0  # bytes out and in
    optimal: bool = False
    bound: int | None = None
    time: int = 0  # cycles


def budgets(problem: ScheduleProblem, points: int) -> list[int]:
    """`points` budgets from the store-all peak down to the least any schedule needs, evenly."""
    top = simulate(problem, store_all(problem)).peak
    low = least_ram(problem)[0]
    if points <= 1 or top <= low:
        return [top]
    return [top - (top - low) * k // (points - 1) for k in range(points)]


def pareto(
    problem: ScheduleProblem,
    ram: Sequence[int],
    *,
    work: float,
    gap: float = 0.0,
    names: Sequence[str] = SCHEDULERS,
) -> list[Point]:
    """Each named scheduler's schedule at each budget of `ram`."""
    points = []
    with progress.step("Pareto front") as step:
        for k, budget in enumerate(ram):
            step.update(f"budget {k + 1} of {len(ram)}")
            for name in names:
                if name == "paging" and not problem.paging:
                    continue
                try:
                    schedule = REGISTRY.get(name)(problem, Budgets(ram=budget, work=work, gap=gap))
                except ScheduleError:
                    points.append(Point(name, budget, None))
                    continue
                o = simulate(problem, schedule)
                paged = o.paged_out + o.paged_in
                points.append(
                    Point(
                        name,
                        budget,
                        o.cost,
                        o.peak,
                        o.recomputed,
                        paged,
                        schedule.optimal,
                        schedule.lower_bound,
                        o.time,
                    )
                )
    return points


def pareto_chart(points: Sequence[Point], fmt: str, *, title: str, unit: str) -> bytes:
    """Cost against budget, one line per scheduler; budgets without a schedule are left out."""
    from matplotlib.figure import Figure

    from mcugen.plan.chart import save_figure

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    for name in dict.fromkeys(p.scheduler for p in points):
        mine = sorted((p.budget, p.cost) for p in points if p.scheduler == name and p.cost)
        if mine:
            ax.plot([b for b, _ in mine], [c for _, c in mine], marker="o", label=name)
    ax.set_xlabel("RAM budget (bytes)")
    ax.set_ylabel(f"cost per step ({unit})")
    ax.set_title(title, fontsize=9)
    ax.legend()
    ax.grid(True, alpha=0.3)
    return save_figure(fig, fmt)


def pareto_table(points: Sequence[Point], unit: str) -> str:
    """Rows by budget, one column group per scheduler: cost, its overhead over the least cost
    found at the largest budget, recomputations, paged bytes, optimal or the bound."""
    names = list(dict.fromkeys(p.scheduler for p in points))
    base = min((p.cost for p in points if p.cost is not None), default=0)
    head = "budget B | " + " | ".join(f"{n}: cost ({unit}), +%, recomputed, paged B" for n in names)
    lines = [f"| {head} |", "|" + "---|" * (1 + len(names))]
    for budget in dict.fromkeys(p.budget for p in points):
        cells = [f"{budget:,}"]
        for name in names:
            p = next((q for q in points if q.budget == budget and q.scheduler == name), None)
            if p is None or p.cost is None:
                cells.append("none")
                continue
            extra = 100.0 * (p.cost - base) / base if base else 0.0
            proof = "optimal" if p.optimal else f"bound {p.bound:,}" if p.bound else "no bound"
            cells.append(f"{p.cost:,}, +{extra:.1f} %, {p.recomputed}, {p.paged:,} ({proof})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
