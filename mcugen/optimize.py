"""`mcugen optimize`: rewrite a model so that stock TFLM runs it in mcugen's smaller arena.

The output stores the operators in mcugen's order and carries mcugen's arena offsets as TFLM's
`OfflineMemoryAllocation` metadata (see mcugen/plan/offline.py for the format and how TFLM uses
it). Tensors, weights and operator options are unchanged, so outputs are bit-exact. The shared
planning flags --no-inplace and --no-rewrite change nothing here: the output never shares storage
(beyond --reshape-views) and is never rewritten (the portable rewrites gained nothing on the
shared models).

TFLM's kernels request their scratch at run time and TFLM places it online, first fit into the
gaps of the offline plan. The plan therefore reserves, at each operator's step, the scratch TFLM's
kernels will ask for (mcugen/plan/tflm_scratch.py); the offsets of those reservations are not
written, TFLM finds the gaps itself.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.plan.memory_plan import MemoryPlan, plan_memory
from mcugen.plan.offline import reshape_view_aliases, with_offline_plan
from mcugen.plan.tflm_scratch import tflm_scratch_bytes


def optimize_model(
    graph: Graph,
    *,
    order: str,
    layout: str,
    reshape_views: bool = False,
    time_budget: float | None = None,
) -> tuple[bytes, MemoryPlan]:
    """The .tflite bytes of `graph` in the planned order with offline offsets, and the plan.
    Nothing shares storage (stock TFLM kernels are not alias-safe) except RESHAPE views when
    `reshape_views`; no rewrite is applied, so tensors and weights are those of `graph`."""
    aliases = reshape_view_aliases(graph) if reshape_views else None
    plan = plan_memory(
        graph,
        order=order,
        layout=layout,
        scratch=tflm_scratch_bytes(graph),
        aliases=aliases,
        time_budget=time_budget,
    )
    rewritten = with_offline_plan(graph, plan, reshape_views=reshape_views)
    return write_model(rewritten, description="mcugen optimize: offline memory plan"), plan


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise McugenError(
            "the output directory does not exist", where=str(parent), hint="create it first"
        )
    if path.is_dir():
        raise McugenError("the output is a directory", where=str(path), hint="give a file name")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cmd_optimize(args: argparse.Namespace) -> int:
    graph = load_model(args.model)
    tflm = getattr(args, "tflm_plan", False)
    data, plan = optimize_model(
        graph,
        order="stored" if tflm else args.order,
        layout="greedy_by_size" if tflm else args.layout,
        reshape_views=args.reshape_views,
        time_budget=getattr(args, "time_budget", None),
    )
    baseline = plan_memory(
        graph, order="stored", layout="greedy_by_size", scratch=tflm_scratch_bytes(graph)
    )
    write_atomic(args.output, data)
    moved = sum(1 for pos, op in enumerate(plan.order) if pos != op)
    print(
        f"mcugen: wrote {args.output}: {len(plan.order)} operators ({moved} moved, order "
        f"{plan.order_strategy}), offline offsets for {len(plan.tensor_offsets())} tensors "
        f"(layout {plan.layout_strategy})"
    )
    print(
        f"  arena {plan.arena_bytes} bytes with TFLM's kernel scratch (peak live bytes of this "
        f"order {plan.lower_bound}); TFLM's own plan of the original: {baseline.arena_bytes} bytes"
    )
    if args.measure:
        from mcugen.reference import tflm_arena_head

        before = tflm_arena_head(args.model)
        after = tflm_arena_head(args.output)
        print(f"  measured with tflite_micro: head {before} -> {after} bytes")
    return 0
