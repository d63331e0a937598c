"""The patch stage in `mcugen plan`'s report and `--json` (plan/patches, MemoryPlan.patches)."""

from __future__ import annotations

from typing import Any

from mcugen.model.ir import Graph
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.patches import PatchPlan


def patches_json(plan: MemoryPlan) -> dict[str, Any]:
    """The search's answer: the stage kept (or null), its grid, MACs added and bytes saved,
    the estimate, the bound, and the arena/MAC front the search saw."""
    found = plan.patches
    assert found is not None
    stage = found.stage
    return {
        "strategy": found.strategy,
        "budget": found.budget,
        "arena_without_patches": plan.arena_without_patches,
        "model_operators": plan.model_operators,
        "bytes_saved": plan.arena_without_patches - plan.arena_bytes if stage else 0,
        "estimated_arena": found.estimated_arena if stage else None,
        "lower_bound": found.lower_bound,
        "total_macs": found.total_macs,
        "stage": None
        if stage is None
        else {
            "operators": list(stage.ops),  # indices in the model as planned whole
            "grid": list(stage.grid),
            "macs": stage.macs,
            "macs_added": stage.macs_added,
            "overhead": round(found.overhead, 6),
        },
        "curve": [
            {"end": p.end, "grid": list(p.grid), "arena": p.arena, "macs_added": p.macs_added}
            for p in found.curve
        ],
    }


def patches_lines(graph: Graph, plan: MemoryPlan) -> list[str]:
    found: PatchPlan | None = plan.patches
    if found is None:
        return []
    stage = found.stage
    budget = f"{100 * found.budget:g} %"
    if stage is None:
        return [
            f"patch stage: none (within {budget} more MACs no stage planned below the "
            f"{plan.arena_without_patches} bytes of the graph run whole)"
        ]
    saved = plan.arena_without_patches - plan.arena_bytes
    first, last = stage.ops[0], stage.ops[-1]
    return [
        f"patch stage: operators {first}-{last} of the model as planned whole ({len(stage.ops)} "
        f"operators) tile by tile over a {stage.grid[0]}x{stage.grid[1]} grid: "
        f"{stage.macs_added:+d} MACs ({100 * found.overhead:+.1f} % of {found.total_macs}, budget "
        f"{budget}), arena {plan.arena_without_patches} -> {plan.arena_bytes} bytes "
        f"({saved} saved; estimated {found.estimated_arena}, one-stage bound "
        f"{found.lower_bound}); {len(graph.operators)} operators with the tiles"
    ]
