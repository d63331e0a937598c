"""`mcugen sweep`: models x boards x an options grid x jobs (plan, estimate, build, run on the
QEMU twins, verify), run on a local process pool or on Ray, every result a row of a SQLite file
(re-runs skip what is done; an interrupted sweep resumes), printed as a table with a summary and
drawn as Pareto plots on an HTML page. The engine is mcugen/sweep/."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcugen.commands._options import positive
from mcugen.errors import McugenError
from mcugen.outputs import check_output_file, write_file

HELP = "plan, estimate, build, run or verify many models on many boards, results in SQLite"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py); the results
#: file is a database the sweep adds to, checked by the command itself.
OUTPUTS: tuple[tuple[str, str], ...] = (("html", "file"),)


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("models", type=Path, nargs="+", help=".tflite/.onnx files or folders of them")
    p.add_argument("--boards", required=True, help="comma-separated boards (`mcugen boards`)")
    p.add_argument(
        "--jobs",
        default="plan",
        help="comma-separated: plan, estimate, build, run (on the twin), verify (default plan)",
    )
    p.add_argument("--grid", type=Path, default=None, help="options grid, TOML (docs/api.md)")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("sweep.sqlite"),
        help="results file, SQLite; re-runs skip the jobs it holds (default sweep.sqlite)",
    )
    p.add_argument(
        "--html",
        type=Path,
        default=None,
        help="the page with the Pareto plots (default: the results file's name with .html)",
    )
    p.add_argument(
        "--workers", type=positive, default=None, help="parallel jobs (default: the cores)"
    )
    p.add_argument(
        "--ray",
        default=None,
        metavar="local|ADDRESS",
        help="run the jobs as Ray tasks: on a Ray instance started here (local) or a cluster "
        "(pip install 'mcugen[ray]')",
    )


def cmd_sweep(args: argparse.Namespace) -> int:
    from mcugen.sweep import engine, grid
    from mcugen.sweep.html import page
    from mcugen.sweep.run import sweep
    from mcugen.sweep.table import results_table, summary_table

    boards = grid.parse_list(args.boards, None, "boards")
    grid.check_boards(boards)
    kinds = grid.parse_list(args.jobs, grid.JOBS, "jobs")
    sets = grid.option_sets(args.grid)
    results = _results_file(args.output)
    html = args.html or results.with_suffix(".html")
    check_output_file(html)
    if args.ray is not None and args.ray != "local" and args.workers is not None:
        raise McugenError("--workers sizes --ray local only", hint="a cluster has its own CPUs")
    jobs = grid.expand(args.models, boards, sets, kinds)
    workers = args.workers or engine.default_workers()
    try:
        outcome = sweep(jobs, results, workers=workers, ray=args.ray, quiet=args.quiet)
    except KeyboardInterrupt:
        print(
            f"mcugen sweep: interrupted; every finished job is kept in {results}: run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return 130
    table, summary = results_table(outcome.rows), summary_table(outcome.rows)
    write_file(html, page(outcome.rows, summary))
    print(table)
    print()
    print(summary)
    # stdout is the tables only: byte-identical however the sweep ran (interrupted, workers)
    print(
        f"mcugen sweep: {outcome.ran} jobs run in {outcome.seconds:.1f} s, {outcome.skipped} "
        f"already in the results file; results in {results}, Pareto plots in {html}",
        file=sys.stderr,
    )
    return 0


def _results_file(path: Path) -> Path:
    """The results file: new, or a sweep's earlier one (its folder must exist)."""
    if path.is_dir():
        raise McugenError("the results file is a directory", where=str(path), hint="name a file")
    if not path.parent.is_dir():
        raise McugenError("the results file's folder does not exist", where=str(path))
    if path.exists():
        with path.open("rb") as f:
            if f.read(16) != b"SQLite format 3\x00":
                raise McugenError(
                    "the file exists and is not a sweep's results file",
                    where=str(path),
                    hint="name a new .sqlite file",
                )
    return path
