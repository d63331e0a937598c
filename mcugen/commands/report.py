"""`mcugen report`: one self-contained HTML page of a model on a board (mcugen/report/html).

It plans the model as `mcugen plan --board` does (the fit verdict, flash linked for the board),
compares the strategies, runs the model once on the board's QEMU twin with profiling (unless
--no-run, the model does not fit or there is no twin: the page says which), reads a measured
current trace when given one, and writes the page atomically; the figures are embedded in it as
JSON and, with --json, written beside it too.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mcugen.boards import Board, load_board, resolve_target
from mcugen.commands._common import device_report, generate_for, load_for, plan_options
from mcugen.commands._options import model_options
from mcugen.commands.plan import board_fit, plan_model, strategy_runs
from mcugen.errors import McugenError, UnsupportedError
from mcugen.outputs import write_file
from mcugen.plan.fit import Fit
from mcugen.report.html.figures import ReportInputs, report_figures
from mcugen.report.html.render import render_report
from mcugen.report.html.trace import load_trace

HELP = "one HTML page: fit, memory, timeline, operators, planners, current"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (("output", "file"), ("json", "file"))


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p, board=False, with_pools=True)
    p.add_argument("--board", required=True, help="the board (see `mcugen boards`)")
    p.add_argument("-o", "--output", type=Path, required=True, help="the page (report.html)")
    p.add_argument(
        "--no-run",
        action="store_true",
        help="do not run the model on the board's QEMU twin (no per-operator figures)",
    )
    p.add_argument(
        "--trace",
        type=Path,
        default=None,
        metavar="FILE.json",
        help="a measured current trace to draw: rate_hz, amperes and marks (report/html/trace.py)",
    )
    p.add_argument(
        "--json", type=Path, default=None, metavar="FILE", help="also write the figures as JSON"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random input of the run")


def cmd_report(args: argparse.Namespace) -> int:
    trace = load_trace(args.trace) if args.trace is not None else None
    board = load_board(args.board)
    if board.is_host:
        raise McugenError(
            "the host board has no memory limits to report against",
            hint="name a board (`mcugen boards` lists them), e.g. --board nucleo-f767",
        )
    graph = load_for(args)
    target = resolve_target(board, emulate=False)
    options = plan_options(args, firmware=True, target=target)
    planned = plan_model(graph, options)
    if planned.unsupported:
        raise UnsupportedError(
            f"model cannot be built for {board.name}: {planned.unsupported}",
            where=str(args.model),
            hint="`mcugen ops` lists the operators mcugen runs",
        )
    fit = board_fit(args, planned, options)
    assert fit is not None
    runs = strategy_runs(graph, planned, in_place=not args.no_inplace)
    device, note = twin_run(args, board, fit)
    inputs = ReportInputs(
        Path(args.model).name, planned.graph, planned.plan, fit, board, runs, device, note, trace
    )
    figures = report_figures(inputs)
    page = render_report(figures)
    write_file(args.output, page)
    if args.json is not None:
        write_file(args.json, json.dumps(figures, indent=1, sort_keys=True) + "\n")
    print(f"mcugen: report written to {args.output}")
    print(f"  {fit.summary()}")
    ops = figures["operators"]
    print(f"  per operator: {ops['where'] if ops['ran'] else ops['note']}")
    print(f"  current: {'measured' if trace else figures['trace']['note']}")
    return 0


def twin_run(args: argparse.Namespace, board: Board, fit: Fit) -> tuple[dict[str, Any] | None, str]:
    """The profiled run on the board's QEMU twin (`device_report`), or None and why not."""
    if args.no_run:
        return None, "not run (--no-run); without it the model runs once on the board's QEMU twin"
    if not fit.fits:
        return None, f"not run: the model does not fit {board.name}"
    if not (board.emulator or board.twin):
        return None, f"not run: {board.name} has no QEMU twin"
    if shutil.which("qemu-system-arm") is None:
        return None, "not run: qemu-system-arm not found (scripts/install.sh installs it)"
    from mcugen.firmware.compile import build
    from mcugen.link.host_run import random_inputs

    twin = resolve_target(board, emulate=True)
    gen = generate_for(args, twin)
    samples = [random_inputs(gen.graph, args.seed)]
    with tempfile.TemporaryDirectory(prefix="mcugen-report-") as tmp:
        result = build(gen, twin, Path(tmp) / "project")
        report = device_report(gen, twin, result, samples, None, True)
    report.pop("_outputs")
    return report, f"random input (seed {args.seed})"
