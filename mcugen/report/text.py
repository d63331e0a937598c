"""Plan reports: a human table and a JSON object. Formatting only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from mcugen import __version__
from mcugen.model.ir import Graph
from mcugen.model.macs import graph_macs
from mcugen.model.numerics import float_nodes_note, float_nodes_of
from mcugen.plan.compare import StrategyRun
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.weight_staging import STAGE_CHOICES
from mcugen.report.paging import paging_json, paging_lines
from mcugen.report.patches import patches_json, patches_lines


def plan_json(
    graph: Graph,
    plan: MemoryPlan,
    runs: Sequence[StrategyRun] | None = None,
    *,
    timings: bool = False,
) -> dict[str, Any]:
    """The plan as one JSON object; `strategies` lists `runs` when given. Byte-identical for the
    same model and options on any machine and load, unless `timings` adds the planning times."""
    result: dict[str, Any] = {
        "mcugen_version": __version__,
        "model_sha256": graph.sha256,
        "operators": len(graph.operators),
        "tensors": len(graph.tensors),
        "order_strategy": plan.order_strategy,
        "layout_strategy": plan.layout_strategy,
        "layout_chosen": plan.layout_chosen,
        "layout_proven_optimal": plan.layout_proven_optimal,
        "arena_bytes": plan.arena_bytes,
        "peak_live_bytes": plan.lower_bound,
        "lower_bound": plan.lower_bound,
        "gap_bytes": plan.arena_bytes - plan.lower_bound,
        "peak_step": plan.peak_step,
        "peak_operator": plan.order[plan.peak_step - 1] if plan.peak_step > 0 else None,
        "order": list(plan.order),
        "offsets": {str(t): off for t, off in sorted(plan.tensor_offsets().items())},
        "live_bytes": plan.live_bytes,
        "arena_lower_bound": plan.arena_lower_bound,
        "arena_bound_gap_bytes": plan.arena_bytes - plan.arena_lower_bound,
        "unshared_order_bound": plan.unshared_order_bound,
        "unshared_order_optimal": plan.unshared_order_optimal,
        "persistent_bytes": plan.persistent.bytes,
        "persistent_memory": plan.persistent.memory or "ram",
        "persistent_offsets": {str(t): off for t, off in sorted(plan.persistent.offsets.items())},
        "input_kept": plan.input_kept,
        "input_kept_saving": plan.input_kept_saving,
    }
    if plan.kernel_choice is not None:
        result["kernel_choice"] = plan.kernel_choice.as_json()
    if plan.channel_slices:
        result["concat_in_place"] = {
            "slices": [asdict(s) for s in plan.channel_slices],
            "concatenations": sorted({s.concat for s in plan.channel_slices}),
            "copy_bytes_elided": sum(s.nbytes for s in plan.channel_slices),
            "arena_without": plan.arena_without_slices or None,
        }
    if plan.staging:
        result["staging"] = plan.staging
        result["staged_bytes"] = plan.staged_bytes
        result["staged"] = [asdict(s) for s in plan.staged]
    if plan.note:  # a search budget reached, a layout search stopped by the wall clock
        result["note"] = plan.note
    float_note = float_nodes_note(graph)  # the line the commands print on stderr
    if float_note is not None:
        result["onnx_float_nodes"] = {"nodes": float_nodes_of(graph), "note": float_note}
    if plan.pools is not None or plan.pools_error:
        result["pools"] = pools_json(plan)
    if plan.paging is not None:
        result["paging"] = paging_json(graph, plan)
    if plan.patches is not None:
        result["patches"] = patches_json(plan)
    if timings:
        result["plan_seconds"] = plan.plan_seconds
    if runs is not None:
        chosen = _chosen(plan, runs)
        result["strategies"] = [
            run_json(r, (r.order, r.layout) == chosen, timings=timings) for r in runs
        ]
    return result


def _chosen(plan: MemoryPlan, runs: Sequence[StrategyRun]) -> tuple[str, str]:
    """The (order, layout) row of `plan`: the run marked chosen, else the plan's strategy names
    as the table lists them ("auto(x)" -> "auto")."""
    marked = next((r for r in runs if r.chosen), None)
    if marked is not None:
        return marked.order, marked.layout
    return plan.order_strategy.partition("(")[0], plan.layout_strategy


def run_json(run: StrategyRun, chosen: bool = False, *, timings: bool = False) -> dict[str, Any]:
    found = {
        "order": run.order,
        "layout": run.layout,
        "chosen": chosen,
        "arena_bytes": run.arena_bytes,
        "input_copy_bytes": run.input_copy_bytes,
        "peak_live_bytes": run.peak_live_bytes,
        "arena_lower_bound": run.arena_lower_bound,
        "layout_gap_bytes": run.layout_gap,
        "arena_bound_gap_bytes": run.bound_gap,
        "unshared_order_bound": run.unshared_order_bound,
        "unshared_order_optimal": run.unshared_order_optimal,
        "note": run.note,
        "error": run.error,
    }
    if timings:
        found["plan_seconds"] = run.plan_seconds
    return found


def strategy_table(runs: Sequence[StrategyRun], chosen: tuple[str, str] | None = None) -> str:
    """One row per order/layout pair: arena, the order's peak (no layout of it is smaller), the
    proven bound on the arena of any plan of the graph (any order, sharing and layout), the
    gaps to the two, planning time; `*` marks the chosen pair. With a board, the runner's copy
    of the input too (none when the plan keeps the input in the arena): the default pair is the
    one with the least arena and copy."""
    wo = max([len("order"), *(len(r.order) for r in runs)])
    wl = max([len("layout"), *(len(r.layout) for r in runs)])
    copies = any(r.input_copy_bytes for r in runs)
    lines = [
        f"  {'order':<{wo}} {'layout':<{wl}} {'arena':>9} "
        + (f"{'input copy':>10} " if copies else "")
        + f"{'order peak':>10} {'arena LB':>9} {'layout gap':>10} {'gap to LB':>9} {'ms':>9}  notes"
    ]
    for r in runs:
        mark = "*" if (r.order, r.layout) == chosen else " "
        if r.error:
            lines.append(f"{mark} {r.order:<{wo}} {r.layout:<{wl}} {'error':>9}  {r.error}")
            continue
        lines.append(
            f"{mark} {r.order:<{wo}} {r.layout:<{wl}} {r.arena_bytes:>9} "
            + (f"{r.input_copy_bytes:>10} " if copies else "")
            + f"{r.peak_live_bytes:>10} {r.arena_lower_bound:>9} {r.layout_gap:>10} "
            f"{_pct(r.bound_gap, r.arena_lower_bound):>9} {r.plan_seconds * 1000:>9.2f}  "
            f"{_notes(r)}"
        )
    return "\n".join(lines)


def _notes(r: StrategyRun) -> str:
    notes = (
        "at arena LB" if r.bound_gap == 0 else "",
        "at order peak" if r.at_lower_bound and r.bound_gap else "",
        "fewest unshared live bytes" if r.unshared_order_optimal else "",
        r.note,
    )
    return ", ".join(n for n in notes if n)


def _pct(gap: int, bound: int) -> str:
    return f"{100.0 * gap / bound:.1f}%" if bound else str(gap)


def plan_text(
    graph: Graph, plan: MemoryPlan, source: str, runs: Sequence[StrategyRun] | None = None
) -> str:
    """The human report: summary, the per-strategy table when `runs` is given, per-step table."""
    live = plan.live_bytes
    gap = plan.arena_bytes - plan.lower_bound
    pct = 100.0 * gap / plan.lower_bound if plan.lower_bound else 0.0
    count = f"{len(graph.operators)} operators"
    if plan.patches is not None and plan.patches.stage is not None and plan.model_operators:
        count = f"{plan.model_operators} operators ({len(graph.operators)} with the patch tiles)"
    lines = [
        f"{source}: {count}, {len(graph.tensors)} tensors",
        f"order {plan.order_strategy}, layout {plan.layout_strategy}, "
        f"planned in {plan.plan_seconds * 1000:.2f} ms",
        f"arena {plan.arena_bytes} bytes; lower bound for this order (peak live bytes) "
        f"{plan.lower_bound}; gap {gap} bytes ({pct:.1f} %)",
        f"lower bound for any plan of this graph (any order, sharing and layout) "
        f"{plan.arena_lower_bound}; gap {plan.arena_bytes - plan.arena_lower_bound} bytes",
    ]
    if plan.peak_step > 0:
        op = graph.operators[plan.order[plan.peak_step - 1]]
        lines.append(f"peak at step {plan.peak_step}: {op.label}")
    if plan.note:
        lines.append(f"note: {plan.note}")
    if plan.persistent.offsets:
        lines.append(_persistent_line(plan))
    if plan.input_kept:
        lines.append(
            f"input kept intact through the inference: the MLPerf runner loads it in place, "
            f"{plan.input_kept_saving} bytes less RAM than its copy"
        )
    lines += kernel_choice_lines(graph, plan)
    if plan.channel_slices:
        lines.append(concat_line(plan))
    if plan.staging:
        lines.append(staging_line(plan))
    if plan.pools is not None or plan.pools_error:
        lines += pools_lines(plan)
    if plan.paging is not None:
        lines += paging_lines(graph, plan)
    lines += patches_lines(graph, plan)
    if runs:
        lines += ["", "strategies (bytes; * = chosen):"]
        lines.append(strategy_table(runs, _chosen(plan, runs)))
    lines.append("")
    lines.append(f"{'step':>4}  {'operator':<28} {'live bytes':>10}  outputs (tensor@offset)")
    offsets = plan.tensor_offsets()
    staged_at = {s.op: s for s in plan.staged}
    lines.append(
        f"{0:>4}  {'(inputs)':<28} {live[0]:>10}  "
        + " ".join(f"t{t}@{offsets.get(t, '-')}" for t in graph.inputs)
    )
    for step, op_index in enumerate(plan.order, start=1):
        op = graph.operators[op_index]
        marker = " <- peak" if step == plan.peak_step else ""
        outs = " ".join(_placed(graph, t, op.inputs, offsets) for t in op.outputs)
        name = op.custom_code or op.opcode  # a training graph's backward kernels by name
        staged = staged_at.get(op_index)
        if staged is not None:
            outs += f" (staged t{staged.tensor}@{staged.offset}: {staged.nbytes} B)"
        lines.append(f"{step:>4}  {op.index:>3} {name:<24} {live[step]:>10}  {outs}{marker}")
    return "\n".join(lines)


#: Swapped layers listed one per line in the text report (all of them in --json).
SWAPS_LISTED = 8


def kernel_choice_lines(graph: Graph, plan: MemoryPlan) -> list[str]:
    """The layers that run a kernel with less scratch than their fastest, and what the arena
    and the MACs moved to slower kernels are (mcugen/kernel_choice.py); nothing when none did."""
    choice = plan.kernel_choice
    if choice is not None and not choice.swaps and 0 < choice.bound < choice.fastest_arena:
        return [f"kernels: the fastest kept (--kernels {choice.policy}): {choice.kept_because}"]
    if choice is None or not choice.swaps:
        return []
    macs = graph_macs(graph)
    share = f" ({100 * choice.swapped_macs / macs:.1f} % of the model's)" if macs else ""
    cost = choice.added_instructions
    costs = f", about {cost:+,} instructions per inference (M4-twin rates)" if cost else ""
    lines = [
        f"kernels chosen for memory (--kernels {choice.policy}): {len(choice.swaps)} layers run "
        f"a kernel with less scratch than their fastest, {choice.swapped_macs:,} MACs{share}"
        f"{costs}; arena {choice.fastest_arena:,} -> {plan.arena_bytes:,} bytes (the reference "
        f"kernels' {choice.bound:,}; --kernels opt keeps the fastest)"
    ]
    for swap in choice.swaps[:SWAPS_LISTED]:
        added = swap.added_instructions
        more = f", about {added:+,} instructions" if added is not None else ""
        lines.append(
            f"  op {swap.op} {swap.opcode}: {swap.chosen} instead of {swap.fastest} "
            f"(scratch {swap.fastest_scratch:,} -> {swap.chosen_scratch:,} bytes, "
            f"{swap.macs:,} MACs{more})"
        )
    if len(choice.swaps) > SWAPS_LISTED:
        lines.append(f"  (+{len(choice.swaps) - SWAPS_LISTED} more; --json lists them all)")
    return lines


def concat_line(plan: MemoryPlan) -> str:
    """Which concatenations their producers wrote in place (plan/channel_slices.py), the copies
    that no longer run, and the arena saved against `--no-concat-in-place` when it was planned."""
    concats = sorted({s.concat for s in plan.channel_slices})
    copied = sum(s.nbytes for s in plan.channel_slices)
    without = plan.arena_without_slices
    saved = (
        f"; arena {without:,} -> {plan.arena_bytes:,} bytes against --no-concat-in-place "
        f"({without - plan.arena_bytes:,} saved)"
        if without
        else ""
    )
    return (
        f"concatenations in place: {len(plan.channel_slices)} inputs of "
        f"{_count(len(concats), 'concatenation')} ({', '.join(f'op {c}' for c in concats)}) "
        f"written by their producers at the output's pixel stride, {copied:,} bytes no longer "
        f"copied{saved}"
    )


def staging_line(plan: MemoryPlan) -> str:
    """`--stage-weights`: the bytes copied per inference and into which operators, the arena
    unchanged (plan/weight_staging.py), or why nothing ran."""
    if plan.staging not in STAGE_CHOICES:
        return f"weights staged: none ({plan.staging})"
    ops = ", ".join(str(s.op) for s in plan.staged) or "none"
    return (
        f"weights staged: {plan.staged_bytes} bytes per inference into free arena bytes, "
        f"{len(plan.staged)} operators ({ops}); arena unchanged"
    )


def pools_json(plan: MemoryPlan) -> dict[str, Any]:
    """The buffers' pools (plan/pools): per memory its bytes, room and tensors, and the modelled
    access cost against all in the fastest memory (a bound) and all in the slowest."""
    split = plan.pools
    if split is None:
        return {"split": False, "error": plan.pools_error}
    labels = _buffer_labels(plan)
    return {
        "strategy": split.strategy,
        "split": split.split,
        "note": split.note,
        "cost_cycles": split.cost,
        "all_fastest_cycles": split.fastest_cost,
        "all_slowest_cycles": split.slowest_cost,
        "memories": {
            p.name: {
                "bytes": p.size,
                "room": p.memory.size,
                "firmware_reserved": p.memory.reserved,
                "buffers": [labels[b] for b in sorted(p.offsets)],
                "offsets": {labels[b]: off for b, off in sorted(p.offsets.items())},
            }
            for p in split.pools
        },
    }


def pools_lines(plan: MemoryPlan) -> list[str]:
    """The text report's pool section: which buffers went where, and what that costs."""
    split = plan.pools
    if split is None:
        return [f"pools: one arena; {plan.pools_error}"]
    if not split.split:
        return [f"pools ({split.strategy}): one pool, {split.note}"]
    labels = _buffer_labels(plan)

    def versus(ref: float) -> str:
        return f"{100.0 * (split.cost - ref) / ref:+.1f} %" if ref else "-"

    lines = [
        f"pools ({split.strategy}): modelled access cost {split.cost:,.0f} cycles, "
        f"{versus(split.fastest_cost)} against all in {split.pools[0].name} (a bound, "
        f"{split.fastest_cost:,.0f}), {versus(split.slowest_cost)} against all in the slowest "
        f"({split.slowest_cost:,.0f})"
    ]
    for p in split.pools:
        names = " ".join(labels[b] for b in sorted(p.offsets))
        lines.append(
            f"  {p.name}: {p.size} of {p.memory.size} bytes, "
            f"{_count(len(p.offsets), 'buffer')}: {names}"
        )
    return lines


def _buffer_labels(plan: MemoryPlan) -> dict[int, str]:
    """Buffer id -> "t12" (its first tensor, "+n" more when shared) or "scratch(op3)"."""
    labels = {}
    for b in plan.buffers:
        tensors = [t for t, _ in b.tensor_placements()]
        more = f"+{len(tensors) - 1}" if len(tensors) > 1 else ""
        labels[b.id] = f"scratch(op{b.scratch_of})" if b.scratch_of >= 0 else f"t{tensors[0]}{more}"
    return labels


def _persistent_line(plan: MemoryPlan) -> str:
    """The variables' area, outside the arena: alive across invokes, so never overlapped."""
    state = plan.persistent
    placed = " ".join(f"t{t}@{off}" for t, off in sorted(state.offsets.items()))
    where = f" in {state.memory}" if state.memory else ""
    return (
        f"persistent state {state.bytes} bytes outside the arena{where} ({len(state.offsets)} "
        f"variable tensors, {state.lower_bound} bytes unpadded; kept across invokes): {placed}"
    )


def _placed(graph: Graph, t: int, inputs: Sequence[int], offsets: Mapping[int, int]) -> str:
    """`tN@offset`, and which input it overwrites when the operator runs in place, or runs over
    from before its start (plan/aliasing.py step 7)."""
    text = f"t{t}@{offsets.get(t, '-')}"
    at, end = offsets.get(t, -1), offsets.get(t, -1) + graph.tensors[t].nbytes
    over = [x for x in inputs if x >= 0 and x in offsets and offsets[x] == at]
    ahead = [x for x in inputs if x >= 0 and at < offsets.get(x, -1) < end]
    if over:
        return f"{text} (over t{over[0]})"
    return text + (
        f" (over t{ahead[0]}, from {offsets[ahead[0]] - at} B before it)" if ahead else ""
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
