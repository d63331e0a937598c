"""The partition report of `mcugen plan --boards` (plan/partition): formatting only.

Times are the partition model's (plan/partition/problem.py: MACs at the boards' cycles per MAC,
UART links at the baud rate with 8N1 and the protocol's framing), not measurements. Arena and
flash are each board's firmware as `run --boards` builds it (`BuiltBoard`), next to the
partitioner's own estimates, which decided the partition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcugen.plan.partition import HOST, Partition, PartitionProblem
from mcugen.plan.partition.partition import loaded_inputs


def _end(board: int) -> str:
    return "host" if board == HOST else str(board)


def link_rows(problem: PartitionProblem, part: Partition) -> list[dict[str, Any]]:
    """Per directed link: data bytes, bytes on the wire, tensors, modelled seconds busy. The
    host's link to a board carries the model inputs it reads before the clock starts (not in
    the latency)."""
    rows = []
    for (a, b), nbytes in part.link_bytes.items():
        if a == HOST:
            tensors = list(loaded_inputs(problem, part.assignment, b))
        else:
            tensors = [x.tensor for x in part.schedule.transfers if (x.source, x.dest) == (a, b)]
        rows.append(
            {
                "link": f"{_end(a)}->{_end(b)}",
                "bytes": nbytes,
                "wire_bytes": sum(
                    problem.link.wire_bytes(problem.tensor_bytes[t]) for t in tensors
                ),
                "tensors": tensors,
                "seconds": sum(problem.transfer_seconds(t) for t in tensors),
                "in_latency": a != HOST,
            }
        )
    return rows


@dataclass(frozen=True)
class BuiltBoard:
    """One board's firmware for its part: the arena it declares (all pools) and its linked
    flash, the figures `run --boards` reports for the same board."""

    arena_bytes: int
    flash_bytes: int


def board_rows(
    problem: PartitionProblem, part: Partition, built: Mapping[int, BuiltBoard]
) -> list[dict[str, Any]]:
    """Per board: its operators, MACs and modelled compute; the arena and flash of its built
    firmware (0 without operators), and the partitioner's estimates of both."""
    rows = []
    for k, board in enumerate(problem.boards):
        ops = [op for op in problem.ops if part.assignment[op.index] == k]
        fw = built.get(k, BuiltBoard(0, 0))
        rows.append(
            {
                "board": k,
                "name": board.name,
                "operators": [op.index for op in ops],
                "macs": sum(op.macs for op in ops),
                "compute_seconds": part.compute[k],
                "arena_bytes": fw.arena_bytes,
                "flash_bytes": fw.flash_bytes,
                "arena_estimate": part.arena[k],
                "ram": board.ram,
                "weights_estimate": part.flash[k],
                "flash_size": board.flash,
            }
        )
    return rows


def partition_json(
    problem: PartitionProblem, part: Partition, built: Mapping[int, BuiltBoard]
) -> dict[str, Any]:
    """The report as one JSON object (byte-identical from run to run: no timings)."""
    return {
        "strategy": part.strategy,
        "note": part.note,
        "baud": problem.link.baud,
        "boards": board_rows(problem, part, built),
        "links": link_rows(problem, part),
        "crossing_tensors": list(part.crossing()),
        "latency_seconds": part.latency,
        "single_board_seconds": part.single_latency,
        "speedup": part.speedup,
        "lower_bound_seconds": part.lower_bound,
        "proven_optimal": part.proven_optimal,
        "estimates": "arena_estimate: peak live bytes per board, whole tensors, no sharing or "
        "kernel scratch; weights_estimate: the board's weights; the partitioner decides on these",
    }


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"


def _ranges(ops: list[int]) -> str:
    """Operator indices as ranges: "0-3, 7, 9-12"."""
    spans: list[list[int]] = []
    for i in ops:
        if spans and spans[-1][1] == i - 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in spans) or "-"


def partition_text(
    problem: PartitionProblem, part: Partition, model: str, built: Mapping[int, BuiltBoard]
) -> str:
    link = problem.link
    lines = [
        f"{model}: {len(problem.ops)} operators over {problem.n_boards} boards, partition "
        f"{part.strategy}" + (f" ({part.note})" if part.note else ""),
        f"links: UART {link.baud:,} baud 8N1, {link.max_payload}-byte messages with "
        f"{link.frame_overhead} bytes of framing and {link.message_latency_s * 1e3:g} ms "
        "turnaround each (modelled)",
        "",
        f"{'board':<22} {'operators':<24} {'MACs':>12} {'compute':>12} {'arena B':>12} "
        f"{'flash B':>12}",
    ]
    for row in board_rows(problem, part, built):
        lines.append(
            f"{row['board']} {row['name']:<20} {_ranges(row['operators']):<24} "
            f"{row['macs']:>12,} {_ms(row['compute_seconds']):>12} {row['arena_bytes']:>12,} "
            f"{row['flash_bytes']:>12,}"
        )
    lines += ["", f"{'link':<10} {'bytes':>10} {'on wire':>10} {'modelled':>12}  tensors"]
    for row in link_rows(problem, part):
        note = "" if row["in_latency"] else "  (inputs, loaded before the clock starts)"
        lines.append(
            f"{row['link']:<10} {row['bytes']:>10,} {row['wire_bytes']:>10,} "
            f"{_ms(row['seconds']):>12}  {', '.join(map(str, row['tensors']))}{note}"
        )
    gap = (part.latency - part.lower_bound) / part.latency if part.latency else 0.0
    lines += [
        "",
        f"latency {_ms(part.latency)} modelled, one board {_ms(part.single_latency)}: "
        f"speed-up {part.speedup:.2f}x; lower bound {_ms(part.lower_bound)} ({gap:.1%} above it)",
        "arena and flash: each board's firmware for its part, planned and linked as "
        "`run --boards` builds it; the partition was chosen on estimates (arena: whole tensors, "
        "no sharing or scratch; flash: weights only)",
    ]
    return "\n".join(lines)
