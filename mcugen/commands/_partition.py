"""`mcugen plan MODEL --boards A,B,...`: the model's operators spread over several boards
(mcugen/plan/partition), reported per board, per link, and end to end."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from mcugen.boards import Target, load_board, resolve_target
from mcugen.commands._common import load_for
from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.options import PlanOptions
from mcugen.plan import partition as partitions
from mcugen.plan.partition.problem import INSTRUCTIONS_PER_MAC, BoardSpec, LinkModel
from mcugen.plan.target import memory_target
from mcugen.report.partition import BuiltBoard, partition_json, partition_text


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
    """Partition the model over `--boards` with `--partition` at `--baud`, build each board's
    firmware as `run --boards` builds it (for the boards' twins with `--emulate`), and print the
    report: the partition's modelled times, the firmware's planned arena and linked flash."""
    strategy = partitions.PARTITIONERS.get(getattr(args, "partition", None))
    specs = board_specs(args.boards)
    graph = load_for(args)
    link = LinkModel(baud=args.baud)
    problem = partitions.partition_problem(graph, specs, link)
    found = strategy(problem, budget=getattr(args, "partition_work", None))
    built = built_boards(args, graph, found)
    if args.json:
        print(json.dumps(partition_json(problem, found, built)))
    else:
        print(partition_text(problem, found, Path(args.model).name, built))
    return 0


def built_boards(
    args: argparse.Namespace, graph: Graph, part: partitions.Partition
) -> dict[int, BuiltBoard]:
    """Board number -> the arena and linked flash of its firmware, built exactly as
    `run --boards` builds it: on the twins with `--emulate` (with their link UARTs unless
    `--links host`), else for the boards themselves, whose tensors the host relays (the real
    boards' link UARTs are not built yet). Boards without operators get no firmware."""
    from mcugen.commands._common import arena_bytes, plan_options
    from mcugen.commands._run_boards import linked_targets
    from mcugen.firmware.sizes import firmware_sizes
    from mcugen.link.multiboard import build_boards
    from mcugen.plan.partition.segments import board_programs, segments

    names = [n.strip() for n in args.boards.split(",")]
    if getattr(args, "emulate", False):
        targets = linked_targets(names, getattr(args, "links", "uart"))
    else:
        targets = [resolve_target(load_board(n), emulate=False) for n in names]

    def options_for(target: Target) -> PlanOptions:
        return plan_options(args, firmware=True, target=target)

    programs = board_programs(graph, segments(graph, part))
    with tempfile.TemporaryDirectory(prefix="mcugen-boards-") as tmp:
        firmware = build_boards(programs, targets, options_for, Path(tmp))
        return {
            prog.board: BuiltBoard(
                arena_bytes(fw.gen), firmware_sizes(fw.result.executable, fw.target).flash_bytes
            )
            for prog, fw in zip(programs, firmware, strict=True)
        }
