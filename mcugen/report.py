"""Plan reports: a human table and a JSON object. Formatting only."""

from __future__ import annotations

from typing import Any

from mcugen.model.ir import Graph
from mcugen.plan.memory_plan import MemoryPlan


def plan_json(graph: Graph, plan: MemoryPlan) -> dict[str, Any]:
    return {
        "model_sha256": graph.sha256,
        "operators": len(graph.operators),
        "tensors": len(graph.tensors),
        "order_strategy": plan.order_strategy,
        "layout_strategy": plan.layout_strategy,
        "arena_bytes": plan.arena_bytes,
        "peak_live_bytes": plan.lower_bound,
        "lower_bound": plan.lower_bound,
        "gap_bytes": plan.arena_bytes - plan.lower_bound,
        "peak_step": plan.peak_step,
        "peak_operator": plan.order[plan.peak_step - 1] if plan.peak_step > 0 else None,
        "order": list(plan.order),
        "offsets": {str(t): off for t, off in sorted(plan.tensor_offsets().items())},
        "live_bytes": plan.live_bytes,
        "plan_seconds": plan.plan_seconds,
    }


def plan_text(graph: Graph, plan: MemoryPlan, source: str) -> str:
    live = plan.live_bytes
    gap = plan.arena_bytes - plan.lower_bound
    pct = 100.0 * gap / plan.lower_bound if plan.lower_bound else 0.0
    lines = [
        f"{source}: {len(graph.operators)} operators, {len(graph.tensors)} tensors",
        f"order {plan.order_strategy}, layout {plan.layout_strategy}, "
        f"planned in {plan.plan_seconds * 1000:.2f} ms",
        f"arena {plan.arena_bytes} bytes; lower bound for this order (peak live bytes) "
        f"{plan.lower_bound}; gap {gap} bytes ({pct:.1f} %)",
    ]
    if plan.peak_step > 0:
        op = graph.operators[plan.order[plan.peak_step - 1]]
        lines.append(f"peak at step {plan.peak_step}: {op.label}")
    lines.append("")
    lines.append(f"{'step':>4}  {'operator':<28} {'live bytes':>10}  outputs (tensor@offset)")
    offsets = plan.tensor_offsets()
    lines.append(
        f"{0:>4}  {'(inputs)':<28} {live[0]:>10}  "
        + " ".join(f"t{t}@{offsets.get(t, '-')}" for t in graph.inputs)
    )
    for step, op_index in enumerate(plan.order, start=1):
        op = graph.operators[op_index]
        marker = " <- peak" if step == plan.peak_step else ""
        outs = " ".join(f"t{t}@{offsets.get(t, '-')}" for t in op.outputs)
        lines.append(f"{step:>4}  {op.index:>3} {op.opcode:<24} {live[step]:>10}  {outs}{marker}")
    return "\n".join(lines)
