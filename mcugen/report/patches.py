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
        "later_stages": [
            {
                "operators": list(later.stage.ops),  # the model's operators (or their tiles)
                "grid": list(later.stage.grid),
                "macs_added": later.stage.macs_added,
                "arena_before": before,
                "arena": after,
            }
            for later, before, after in plan.later_patches
            if later.stage is not None
        ],
        "macs_added_all_stages": macs_added(plan),
        "curve": [
            {"end": p.end, "grid": list(p.grid), "arena": p.arena, "macs_added": p.macs_added}
            for p in found.curve
        ],
    }


def macs_added(plan: MemoryPlan) -> int:
    """The MACs every patch stage of `plan` adds together (0 without a stage)."""
    stages = [plan.patches, *(found for found, _, _ in plan.later_patches)]
    return sum(f.stage.macs_added for f in stages if f is not None and f.stage is not None)


def grids(plan: MemoryPlan) -> str:
    """Every kept stage's grid in the order found: '5x2', or '4x2+3x4' for two stages."""
    stages = [plan.patches, *(found for found, _, _ in plan.later_patches)]
    return "+".join(
        f"{f.stage.grid[0]}x{f.stage.grid[1]}" for f in stages if f is not None and f.stage
    )


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
    head = (
        f"patch stage: operators {first}-{last} of the model as planned whole ({len(stage.ops)} "
        f"operators) tile by tile over a {stage.grid[0]}x{stage.grid[1]} grid: "
        f"{stage.macs_added:+d} MACs ({100 * found.overhead:+.1f} % of {found.total_macs}, budget "
        f"{budget}), arena {plan.arena_without_patches} -> "
    )
    tail = f"estimated {found.estimated_arena}, one-stage bound {found.lower_bound}"
    if not plan.later_patches:
        return [
            f"{head}{plan.arena_bytes} bytes ({saved} saved; {tail}); "
            f"{len(graph.operators)} operators with the tiles"
        ]
    first_arena = plan.later_patches[0][1]
    total = macs_added(plan)
    return [
        f"{head}{first_arena} bytes ({plan.arena_without_patches - first_arena} saved; {tail})",
        *(
            f"  then operators {', '.join(_ranges(later.stage.ops))} over a "
            f"{later.stage.grid[0]}x{later.stage.grid[1]} grid: {later.stage.macs_added:+d} "
            f"MACs, arena {before} -> {after} bytes"
            for later, before, after in plan.later_patches
            if later.stage is not None
        ),
        f"  all {1 + len(plan.later_patches)} stages: {total:+d} MACs "
        f"({100 * total / found.total_macs:+.1f} %), arena {plan.arena_without_patches} -> "
        f"{plan.arena_bytes} bytes ({saved} saved); {len(graph.operators)} operators with the "
        "tiles",
    ]


def _ranges(ops: tuple[int, ...]) -> list[str]:
    """Sorted operator indices as runs: (4, 5, 6, 9) -> ['4-6', '9']."""
    runs: list[list[int]] = []
    for i in ops:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [f"{a}-{b}" if a != b else f"{a}" for a, b in runs]
