"""The paging part of the plan reports (plan/paging/target.py): formatting only.

Figures are the schedule's modelled costs, in cycles (picojoules with --objective energy): the
overhead against everything in fast memory (0 by definition: a bound, even when it does not fit),
against the whole arena in the slow memory used in place (what a user without paging does), and
the gap to the proven lower bound.
"""

from __future__ import annotations

from typing import Any

from mcugen.model.ir import Graph
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.paging.schedule import Memory
from mcugen.plan.paging.target import PagingPlan


def fast_in_use(paging: PagingPlan) -> list[int]:
    """Bytes of fast memory holding buffers at each step 0..steps."""
    used = [0] * (paging.problem.steps + 1)
    sizes = paging.problem.index
    for e in paging.schedule.episodes:
        if e.memory == Memory.FAST:
            for s in range(e.first, e.last + 1):
                used[s] += sizes[e.buffer].size
    return used


def _cycles(millicycles: int | None) -> float | None:
    return None if millicycles is None else millicycles / 1000


def _gap(paging: PagingPlan) -> str:
    s = paging.schedule
    if s.proven_optimal:
        return "proven optimal"
    if s.lower_bound == 0:
        return "lower bound 0"
    return f"{100.0 * (s.cost / s.lower_bound - 1):.1f} % above the lower bound"


def paging_json(graph: Graph, plan: MemoryPlan) -> dict[str, Any]:
    """The schedule's figures and its traffic per step."""
    paging = plan.paging
    assert paging is not None
    s, cost = paging.schedule, paging.problem.cost
    used = fast_in_use(paging)
    return {
        "strategy": s.strategy,
        "note": s.note,
        "fast_budget": paging.capacity,
        "fast_bytes": paging.fast_bytes,
        "arena_all_fast": plan.arena_bytes,
        "slow_memory": paging.slow.name,
        "slow_external": paging.slow.external,
        "slow_bytes": paging.slow_bytes,
        "bytes_in": s.bytes_in,
        "bytes_out": s.bytes_out,
        "cost_model": {
            "copy_out": cost.copy_out,
            "copy_in": cost.copy_in,
            "slow_access": cost.slow_access,
        },
        "unit": paging.unit,
        "overhead": _cycles(s.cost),
        "all_fast_overhead": 0.0,
        "all_slow_overhead": _cycles(paging.all_in_slow),
        "lower_bound": _cycles(s.lower_bound),
        "proven_optimal": s.proven_optimal,
        "order": plan.order_strategy,
        "orders_tried": {name: _cycles(cost) for name, cost in paging.orders_tried},
        "steps": [
            {
                "step": step,
                "operator": plan.order[step - 1] if step > 0 else None,
                "bytes_in": bytes_in,
                "bytes_out": bytes_out,
                "fast_in_use": used[step],
            }
            for step, bytes_in, bytes_out in paging.traffic()
        ],
    }


def paging_lines(graph: Graph, plan: MemoryPlan) -> list[str]:
    """The text report's paging section: budget, traffic, modelled overhead, and the steps with
    copies before them."""
    paging = plan.paging
    assert paging is not None
    s, unit = paging.schedule, paging.unit
    slow = paging.all_in_slow
    versus = (
        f"{100.0 * s.cost / slow:.1f} % of the {slow / 1000:,.0f} {unit} the whole arena in "
        f"{paging.slow.name} would add"
        if slow
        else f"kernels may not work in {paging.slow.name}: no all-in-slow baseline"
    )
    lines = [
        f"paging ({s.strategy}, {_gap(paging)}): fast memory {paging.fast_bytes:,} of a "
        f"{paging.capacity:,}-byte budget (the arena all in fast memory: {plan.arena_bytes:,}), "
        f"{paging.slow.name} {paging.slow_bytes:,} bytes",
        f"  per inference: {s.bytes_in:,} bytes paged in, {s.bytes_out:,} out; modelled "
        f"overhead {s.cost / 1000:,.0f} {unit} against everything in fast memory (a bound), "
        f"{versus}; lower bound {s.lower_bound / 1000:,.0f} {unit}",
    ]
    if paging.orders_tried:
        costs = ", ".join(f"{name} {cost / 1000:,.0f}" for name, cost in paging.orders_tried)
        lines.append(
            f"  order {plan.order_strategy}: the heuristic's modelled {unit} of each order "
            f"tried: {costs}"
        )
    if s.note:
        lines.append(f"  note: {s.note}")
    used = fast_in_use(paging)
    for step, bytes_in, bytes_out in paging.traffic():
        op = graph.operators[plan.order[step - 1]] if step > 0 else None
        label = f"op {op.index:>3} {op.opcode}" if op is not None else "(inputs)"
        lines.append(
            f"  before step {step:>3} ({label}): in {bytes_in:,}, out {bytes_out:,}; fast in use "
            f"{used[step]:,}"
        )
    return lines
