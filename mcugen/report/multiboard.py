"""The report of `mcugen run MODEL --boards A,B,... --emulate` (link/multiboard.py): formatting
only. Instructions, arenas, flash and bytes are measured on the twins; times are modelled from
the measured instructions (at each board's clock and cycles per instruction) and the partition's
link model (plan/partition/problem.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcugen.link.multiboard import RelayRun, TwinRun
from mcugen.plan.partition import HOST, Partition, PartitionProblem


def _end(board: int) -> str:
    return "host" if board == HOST else str(board)


def board_rows(
    problem: PartitionProblem, part: Partition, run: RelayRun, cpi_sources: Sequence[str]
) -> list[dict[str, Any]]:
    rows = []
    for k, spec in enumerate(problem.boards):
        mine = [(s, r) for s, r in zip(run.segments, run.runs, strict=True) if s.board == k]
        rows.append(
            {
                "board": k,
                "name": spec.name,
                "operators": [op for op in part.order if part.assignment[op] == k],
                "segments": len(mine),
                "instructions": sum(r.instructions for _, r in mine),
                "cycles_per_instruction": spec.cycles_per_instruction,
                "cycles_per_instruction_from": cpi_sources[k],
                "clock_hz": spec.clock_hz,
                "compute_seconds": part.compute[k],
                "arena_bytes": max((r.arena_bytes for _, r in mine), default=0),
                "flash_bytes": max((r.flash_bytes for _, r in mine), default=0),
                "kept_bytes": run.kept_bytes.get(k, 0),
            }
        )
    return rows


def link_rows(problem: PartitionProblem, part: Partition, run: RelayRun) -> list[dict[str, Any]]:
    """Per directed link: bytes relayed (measured), bytes the partition's model sends, and the
    modelled seconds of its transfers at the baud rate (host links carry the inputs before the
    clock starts and are not timed, as in the partition model)."""
    keys = sorted(set(run.link_bytes) | set(part.link_bytes))
    rows = []
    for a, b in keys:
        transfers = [x for x in part.schedule.transfers if (x.source, x.dest) == (a, b)]
        rows.append(
            {
                "link": f"{_end(a)}->{_end(b)}",
                "bytes": run.link_bytes.get((a, b), 0),
                "model_bytes": part.link_bytes.get((a, b), 0),
                "tensors": [x.tensor for x in transfers],
                "seconds": sum(x.end - x.start for x in transfers),
                "in_latency": a != HOST,
                "wire_bytes": run.wire_bytes.get((a, b)),
                "resent_frames": run.resends.get((a, b)),
            }
        )
    return rows


def multiboard_json(
    problem: PartitionProblem,
    measured: Partition,
    run: RelayRun,
    one_board: tuple[Partition | None, TwinRun | None, str],
    *,
    cpi_sources: Sequence[str],
    reference: str,
    equal: bool,
) -> dict[str, Any]:
    """`measured`: the partition with the twins' instructions per operator; `one_board`: the
    same on board 0 alone with the single-board twin's instructions, that twin's run, and why
    there is none ("" when there is; e.g. its plan does not fit the board); `reference`: what
    the outputs were checked against."""
    single, single_run, no_fit = one_board
    return {
        "strategy": measured.strategy,
        "baud": problem.link.baud,
        "links_mode": run.links_mode,
        "boards": board_rows(problem, measured, run, cpi_sources),
        "links": link_rows(problem, measured, run),
        "board_to_board_bytes": sum(
            n for (a, b), n in run.link_bytes.items() if HOST not in (a, b)
        ),
        "latency_seconds": measured.latency,
        "single_board": no_fit or "ran",
        "single_board_seconds": single.latency if single else None,
        "single_board_instructions": single_run.instructions if single_run else None,
        "single_board_arena_bytes": single_run.arena_bytes if single_run else None,
        "single_board_flash_bytes": single_run.flash_bytes if single_run else None,
        "speedup": single.latency / measured.latency if single and measured.latency > 0 else None,
        "reference": reference,
        "outputs_equal": equal,
        "relay_seconds": run.seconds,
        "timing": "modelled: measured instructions at each board's clock and cycles per "
        "instruction, links at the baud rate (8N1, the protocol's framing)",
    }


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"


def multiboard_text(report: dict[str, Any], model: str) -> str:
    r = report
    how = "board to board over link UARTs" if r["links_mode"] == "uart" else "host-relayed"
    lines = [
        f"mcugen: ran {model} on {len(r['boards'])} QEMU twins, {how}, partition "
        f"{r['strategy']}, links at {r['baud']:,} baud (relayed in {r['relay_seconds']:.1f} s)",
        "  boards (instructions measured on the twins; time modelled at the board's clock):",
    ]
    for b in r["boards"]:
        lines.append(
            f"    {b['board']} {b['name']:<14} {len(b['operators']):>3} operators in "
            f"{b['segments']} phase(s)  {b['instructions']:>13,} instructions  "
            f"{_ms(b['compute_seconds']):>11}  arena {b['arena_bytes']:,} B  "
            f"flash {b['flash_bytes']:,} B"
            + (f"  kept {b['kept_bytes']:,} B" if b["kept_bytes"] else "")
        )
    for b in r["boards"]:
        lines.append(
            f"    board {b['board']}: {b['cycles_per_instruction']} cycles per instruction "
            f"({b['cycles_per_instruction_from']}) at {b['clock_hz'] / 1e6:.0f} MHz"
        )
    lines.append("  links (tensor bytes carried = bytes the partition models):")
    for row in r["links"]:
        timed = _ms(row["seconds"]) if row["in_latency"] else "before the clock"
        wire = ""
        if row["wire_bytes"] is not None:
            wire = f"  on the wire {row['wire_bytes']:,} B, {row['resent_frames']} frames resent"
        lines.append(
            f"    {row['link']:<9} {row['bytes']:>8,} bytes (model {row['model_bytes']:,})  "
            f"{timed}{wire}"
        )
    verdict = "equal" if r["outputs_equal"] else "DIFFERENT (a bug in mcugen)"
    one = (
        f"one board {_ms(r['single_board_seconds'])} ({r['single_board_instructions']:,} "
        f"instructions measured): speed-up {r['speedup']:.2f}x"
        if r["speedup"] is not None
        else f"one board: none ({r['single_board']})"
    )
    lines += [
        f"  end to end (modelled): {_ms(r['latency_seconds'])}; {one}",
        f"  outputs: {verdict} to {r['reference']}, bit for bit",
    ]
    return "\n".join(lines)
