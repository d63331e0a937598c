"""`mcugen plan MODEL --boards A,B,...`: the model's operators spread over several boards
(mcugen/plan/partition), reported per board, per link, and end to end."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mcugen.boards import load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.model.tflite_import import load_model
from mcugen.plan import partition as partitions
from mcugen.plan.partition.problem import INSTRUCTIONS_PER_MAC, BoardSpec, LinkModel
from mcugen.plan.target import memory_target
from mcugen.report.partition import partition_json, partition_text


def board_specs(names: str) -> list[BoardSpec]:
    """The boards of `--boards` (comma-separated, one entry per board) as the partitioner's
    numbers: RAM for the arena (the RAM less the stack and the firmware's fixed RAM), flash, the
    clock, cycles per MAC (mcugen's instructions per MAC at the board's cycles per instruction)."""
    listed = [n.strip() for n in names.split(",")]
    if any(not n for n in listed):
        raise McugenError(f"--boards '{names}' has an empty entry", hint="e.g. --boards a,b")
    if len(listed) < 2:
        raise McugenError(
            f"--boards names one board ({listed[0]}); a partition needs two or more",
            hint="repeat it for identical boards, e.g. --boards nucleo-f767,nucleo-f767",
        )
    specs = []
    for name in listed:
        board = load_board(name)
        if board.is_host or board.ram is None or board.flash is None or not board.clock_hz:
            raise McugenError(
                f"board '{name}' has no RAM, flash or clock to partition for",
                hint="name Cortex-M boards (`mcugen boards`)",
            )
        cpi = board.energy.cycles_per_instruction if board.energy is not None else 1.0
        memory = memory_target(resolve_target(board, emulate=False))
        specs.append(
            BoardSpec(
                memory,
                clock_hz=board.clock_hz,
                cycles_per_mac=INSTRUCTIONS_PER_MAC * cpi,
                cycles_per_instruction=cpi,
            )
        )
    return specs


def cmd_partition(args: argparse.Namespace) -> int:
    """Partition the model over `--boards` with `--partition` at `--baud`; print the report."""
    strategy = partitions.PARTITIONERS.get(getattr(args, "partition", None))
    specs = board_specs(args.boards)
    graph = load_model(args.model)
    link = LinkModel(baud=args.baud)
    problem = partitions.partition_problem(graph, specs, link)
    found = strategy(problem, budget=getattr(args, "partition_work", None))
    if args.json:
        print(json.dumps(partition_json(problem, found)))
    else:
        print(partition_text(problem, found, Path(args.model).name))
    return 0
