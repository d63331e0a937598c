"""The text report of `mcugen train` (its JSON: commands/train.py and commands/_training.py)."""

from __future__ import annotations

from typing import Any


def _within(sched: dict) -> str:
    """How far the schedule may be from the optimum: its cost over the lower bound."""
    bound = sched["lower_bound"]
    if bound is None:
        return ", no lower bound"
    gap = sched["cost"] - bound
    return f", at most {gap:,} ({100 * gap / max(sched['cost'], 1):.2f} %) above the optimum"


def _epoch_line(f: dict[str, Any]) -> str:
    """`epoch 2: loss 0.41 (mean), accuracy 87.5 %; held-out loss 0.52, accuracy 83.3 %`."""
    line = f"epoch {f['epoch']}: loss {f['loss']:.6g} (mean)"
    if f["accuracy"] is not None:
        line += f", accuracy {100 * f['accuracy']:.1f} %"
    if f["held_out_loss"] is not None:
        line += f"; held-out loss {f['held_out_loss']:.6g}"
        if f["held_out_accuracy"] is not None:
            line += f", accuracy {100 * f['held_out_accuracy']:.1f} %"
    return line


def print_training(r: dict[str, Any]) -> None:
    ops = ", ".join(f"{t['operator']} ({t['opcode']})" for t in r["trainable"])
    where = r["board"] + (" (QEMU twin)" if r["emulated"] else "")
    print(
        f"mcugen: trained operators {ops} of {r['model']} on {where}: {r['steps']} steps, "
        f"{r['loss_function'].replace('_', '-')} loss, in {r['seconds']:.2f} s"
    )
    held_out = r["held_out"]
    if held_out is not None:
        after = (
            "every epoch"
            if held_out["every_epoch"]
            else "the last epoch only (with --accumulate above 1 an evaluation before then would "
            "add to the gradient sums)"
        )
        print(f"  held-out: {held_out['samples']} samples of {held_out['data']}, after {after}")
    for figures in r["epochs"]:
        print(f"  {_epoch_line(figures)}")
    print(f"  loss of the first and last step: {r['loss'][0]:.6g}, {r['loss'][-1]:.6g}")
    if r["per_step"]:
        low, high = min(r["per_step"]), max(r["per_step"])
        span = f"{low:,}" if low == high else f"{low:,} to {high:,}"
        print(f"  per step: {span} {r['unit']}")
    state = r["state"]
    print(
        f"  arena {r['arena_bytes']:,} bytes; state {r['state_bytes']:,} bytes (weights, "
        f"gradient sums, momentum) in {state['memory']}"
        + (f"; stack used {r['stack_used']:,} of {r['stack_bytes']:,}" if r["stack_bytes"] else "")
        + (
            f"; RAM {state['ram_bytes']:,} of {state['ram_size']:,} bytes linked"
            if state["ram_bytes"] is not None
            else ""
        )
    )
    if state["modelled_access_cycles_per_step"] is not None:
        print(
            f"  the state is read and written in place in {state['memory']}: "
            f"{state['modelled_access_cycles_per_step']:,} cycles a step modelled for one read "
            "and one write of each byte, which the twin does not count (QEMU's SDRAM has no "
            "wait states)"
        )
    sched = r.get("schedule")
    if sched:
        print(
            f"  schedule {sched['scheduler']} under {sched['ram_budget']:,} bytes: live peak "
            f"{sched['peak_bytes']:,} (store-all {sched['store_all_peak_bytes']:,}); "
            f"{len(sched['recomputed'])} recomputed operators, paged {sched['paged_out_bytes']:,} "
            f"bytes out and {sched['paged_in_bytes']:,} in; cost {sched['cost']:,} against "
            f"{sched['store_all_cost']:,} {sched['cost_unit']}"
            + (", proven optimal" if sched["optimal"] else _within(sched))
        )
        if sched["cost_unit"].startswith("pJ"):
            print(
                f"  ESTIMATED energy a step: {sched['cost'] / 1e6:,.1f} uJ against store-all's "
                f"{sched['store_all_cost'] / 1e6:,.1f} uJ; time {sched['time']:,} against "
                f"{sched['store_all_time']:,} cycles"
            )
        for b in sched["baselines"]:
            name = {"remat": "recomputation only", "paging": "paging only"}[b["scheduler"]]
            if b["cost"] is None:
                print(f"  baseline {name}: no schedule within {sched['ram_budget']:,} bytes")
                continue
            extra = 100 * (b["cost"] - sched["cost"]) / max(sched["cost"], 1)
            print(
                f"  baseline {name}: cost {b['cost']:,} ({extra:+.1f} % against this schedule), "
                f"time {b['time']:,} cycles"
            )
        if sched["note"]:
            print(f"  note: {sched['note']}")
    paged = r.get("paging")
    if paged:
        print(
            f"  paged per step: {paged['bytes_out_per_step']:,} bytes out to and "
            f"{paged['bytes_in_per_step']:,} in from {paged['slow_memory']} "
            f"({paged['slow_bytes']:,} bytes there; {paged['modelled_cost_per_step']:,.0f} "
            f"{paged['modelled_unit']} modelled for copies and slow accesses, which the twin does "
            "not count)"
        )
    if r["output"]:
        kind = "int8 throughout" if r["requantized"] else "its trained part in float32"
        print(f"  wrote {r['output']} ({kind})")
