"""`mcugen run MODEL --boards A,B,... --emulate`: the model partitioned over several boards'
QEMU twins, one firmware per board, tensors between boards over link UARTs or through the host
(link/linked_run.py), checked bit for bit against the same
model on one board's twin (or, when no single board holds the model, against TFLM or mcugen's
host build), reported per board, per link and end to end."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from mcugen.boards import Target, load_board, resolve_target
from mcugen.commands._common import inputs_for, load_for, plan_options
from mcugen.commands._partition import board_specs
from mcugen.errors import DoesNotFit, McugenError
from mcugen.link.linked_run import run_partition
from mcugen.link.multiboard import (
    Firmware,
    build_boards,
    build_firmware,
    outputs_equal,
    reference_outputs,
    run_twin,
)
from mcugen.model.ir import Graph
from mcugen.model.load import reference_flatbuffer
from mcugen.model.numerics import uses_ort
from mcugen.options import PlanOptions
from mcugen.plan import partition as partitions
from mcugen.plan.partition.problem import LinkModel
from mcugen.plan.partition.segments import board_programs, segments
from mcugen.reference import onnxruntime_outputs
from mcugen.report.multiboard import multiboard_json, multiboard_text


def check_args(args: argparse.Namespace) -> list[str]:
    """The board names, after the checks that need nothing built: one line each, exit 2."""
    if getattr(args, "board", None) is not None:
        raise McugenError("--board and --boards together", hint="use one of them")
    if getattr(args, "port", None):
        raise McugenError(
            "--port with --boards: real boards over serial links are not built yet",
            hint="add --emulate to run on the boards' QEMU twins",
        )
    if not getattr(args, "emulate", False):
        raise McugenError(
            "--boards without --emulate: running on real boards over serial links is not built yet",
            hint="add --emulate to run on the boards' QEMU twins",
        )
    board_specs(args.boards)  # one board, an empty entry, an unknown board: one line each
    return [n.strip() for n in args.boards.split(",")]


def cpi_source(name: str) -> str:
    energy = load_board(name).energy
    if energy is None:
        return "no [energy] model: 1 cycle per instruction assumed"
    return f"boards/{name}/board.toml [energy]"


def linked_targets(names: list[str], links: str) -> list[Target]:
    """Each board's twin target, built with its link UARTs when tensors go board to board."""
    targets = [resolve_target(load_board(n), emulate=True) for n in names]
    if links == "host":
        return targets
    for name, target in zip(names, targets, strict=True):
        if target.port_board.link_uarts < len(names) - 1:
            raise McugenError(
                f"board '{name}': its twin ({target.machine}) has "
                f"{target.port_board.link_uarts} link UARTs, {len(names) - 1} needed for "
                f"{len(names)} boards",
                hint="use --links host (the host relays the tensors), or fewer boards",
            )
    return [replace(t, links=t.port_board.link_uarts) for t in targets]


def single_board(
    graph: Graph, target: Target, options: PlanOptions, workdir: Path
) -> tuple[Firmware | None, str]:
    """The whole model built for `target` (the reference run), or None and why when its plan
    does not fit the board (then the run is checked against TFLM or the host build)."""
    ops = tuple(range(len(graph.operators)))
    try:
        return build_firmware(graph, ops, target, options, workdir / "one"), ""
    except DoesNotFit as err:
        return None, err.what


def cmd_run_boards(args: argparse.Namespace) -> int:
    names = check_args(args)
    specs = board_specs(args.boards)
    links_mode = getattr(args, "links", "uart")
    targets = linked_targets(names, links_mode)
    graph = load_for(args)
    sample = inputs_for(args, graph, 1)[0]  # before any work: a wrong file costs nothing
    link = LinkModel(baud=args.baud)
    problem = partitions.partition_problem(graph, specs, link)
    strategy = partitions.PARTITIONERS.get(getattr(args, "partition", None))
    part = strategy(problem, budget=getattr(args, "partition_work", None))
    segs = segments(graph, part)

    def options_for(target: Target) -> PlanOptions:
        return plan_options(args, firmware=True, target=target)

    with tempfile.TemporaryDirectory(prefix="mcugen-boards-") as tmp:
        single_fw, no_fit = single_board(graph, targets[0], options_for(targets[0]), Path(tmp))
        programs = board_programs(graph, segs)
        firmware = build_boards(programs, targets, options_for, Path(tmp))
        single_run = run_twin(single_fw, sample) if single_fw is not None else None
        if single_run is not None:
            expected, reference = single_run.outputs, f"the single-board run ({names[0]})"
        else:
            host = resolve_target(load_board("host"), emulate=False)
            ops = tuple(range(len(graph.operators)))

            def host_build() -> Firmware:
                return build_firmware(graph, ops, host, options_for(host), Path(tmp) / "host")

            if uses_ort(graph):  # an ONNX model with onnxruntime's numerics
                expected = onnxruntime_outputs(args.model, graph, [list(sample)])[0]
                reference = "onnxruntime"
            else:
                model = reference_flatbuffer(args.model)
                expected, reference = reference_outputs(model, graph, sample, host_build)
        run = run_partition(graph, segs, programs, firmware, sample, links=links_mode)
    measured = partitions.Partition.of(
        part.strategy,
        partitions.partition_problem(graph, specs, link, instructions=run.per_op()),
        part.assignment,
        part.order,
    )
    single = None
    if single_run is not None:
        single = partitions.Partition.of(
            "single",
            partitions.partition_problem(graph, specs, link, instructions=single_run.per_op),
            (0,) * len(graph.operators),
            part.order,
        )
    equal = outputs_equal(run.outputs, expected)
    report = multiboard_json(
        problem,
        measured,
        run,
        (single, single_run, no_fit),
        cpi_sources=[cpi_source(n) for n in names],
        reference=reference,
        equal=equal,
    )
    if args.output:
        from mcugen.io import save_outputs

        save_outputs(args.output, graph, run.outputs)
    print(json.dumps(report) if args.json else multiboard_text(report, Path(args.model).name))
    if not equal:
        print(
            f"mcugen: error: the partitioned run's outputs differ from {reference}'s: "
            "a bug in mcugen; report it with the model and --partition",
            file=sys.stderr,
        )
        return 1
    return 0
