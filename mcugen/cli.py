"""Command line: argument parsing and printing only; the work happens in the pipeline stages."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mcugen import __version__
from mcugen.errors import McugenError
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except McugenError as err:
        print(f"mcugen: error: {err.line()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("mcugen: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except Exception as exc:  # a bug: still one line unless asked for the traceback
        if os.environ.get("MCUGEN_DEBUG"):
            raise
        print(
            f"mcugen: internal error: {type(exc).__name__}: {exc}; this is a bug in mcugen, "
            "rerun with MCUGEN_DEBUG=1 for a traceback and report it",
            file=sys.stderr,
        )
        return 70


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcugen", description=__doc__)
    p.add_argument("--version", action="version", version=f"mcugen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    plan = sub.add_parser("plan", help="plan the arena of a model and report it")
    plan.add_argument("model", type=Path)
    _plan_options(plan)
    plan.add_argument("--json", action="store_true", help="print one JSON object")
    plan.set_defaults(func=cmd_plan)

    build = sub.add_parser("build", help="generate C and compile it for a board")
    build.add_argument("model", type=Path)
    build.add_argument("--board", default="host")
    build.add_argument("-o", "--output", type=Path, default=None, help="project directory")
    _plan_options(build)
    build.set_defaults(func=cmd_build)

    run = sub.add_parser("run", help="build, run on inputs and print the outputs")
    run.add_argument("model", type=Path)
    run.add_argument("--board", default="host")
    run.add_argument("--input", type=Path, default=None, help=".npy (one input) or .npz")
    run.add_argument("--output", type=Path, default=None, help="write outputs (.npy or .npz)")
    run.add_argument("--seed", type=int, default=0, help="seed of the random input")
    _plan_options(run)
    run.set_defaults(func=cmd_run)

    boards = sub.add_parser("boards", help="list the boards")
    boards.set_defaults(func=cmd_boards)
    return p


def _plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--order", default=orders.DEFAULT, choices=sorted(orders.ORDERS))
    p.add_argument("--layout", default=layouts.DEFAULT, choices=sorted(layouts.LAYOUTS))


def cmd_plan(args: argparse.Namespace) -> int:
    from mcugen.model.tflite_import import load_model
    from mcugen.plan.memory_plan import plan_memory
    from mcugen.report import plan_json, plan_text

    graph = load_model(args.model)
    plan = plan_memory(graph, order=args.order, layout=args.layout)
    if args.json:
        print(json.dumps(plan_json(graph, plan)))
    else:
        print(plan_text(graph, plan, str(args.model)))
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from mcugen.boards import load_board
    from mcugen.host.project import build
    from mcugen.pipeline import generate_from_file

    board = load_board(args.board)
    gen = generate_from_file(args.model, order=args.order, layout=args.layout)
    out = args.output or Path("build") / f"{args.model.stem}-{board.name}"
    result = build(gen, board, out)
    size = result.executable.stat().st_size
    print(f"mcugen: built {args.model} for {board.name} in {result.compile_seconds:.2f} s")
    print(f"  project:    {result.directory}/ ({len(result.files)} files)")
    print(f"  executable: {result.executable} ({size} bytes)")
    print(f"  arena:      {gen.plan.arena_bytes} bytes (lower bound {gen.plan.lower_bound})")
    print(f"  weights:    {sum(len(c.data) for c in gen.view_model.constants)} bytes in flash")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from mcugen.boards import load_board
    from mcugen.host.host_run import random_inputs, run_host
    from mcugen.host.project import build
    from mcugen.io import load_inputs, save_outputs
    from mcugen.pipeline import generate_from_file

    board = load_board(args.board)
    if not board.is_host:
        raise McugenError(f"board '{board.name}' cannot run yet", hint="use --board host")
    gen = generate_from_file(args.model, order=args.order, layout=args.layout)
    graph = gen.graph
    inputs = load_inputs(args.input, graph) if args.input else random_inputs(graph, args.seed)
    with tempfile.TemporaryDirectory(prefix="mcugen-") as tmp:
        result = build(gen, board, Path(tmp) / "project")
        run = run_host(result.executable, graph, [inputs])
    outputs = run.outputs[0]
    source = str(args.input) if args.input else f"random input (seed {args.seed})"
    print(f"mcugen: ran {args.model} on {board.name} with {source} in {run.seconds * 1000:.1f} ms")
    print(f"  arena: {gen.plan.arena_bytes} bytes")
    for t_index, arr in zip(graph.outputs, outputs, strict=True):
        t = graph.tensors[t_index]
        flat = arr.ravel()
        head = ", ".join(str(v) for v in flat[:10].tolist()) + (", ..." if flat.size > 10 else "")
        print(f"  output {t.name or t_index} {t.dtype}{list(t.shape)}: [{head}]")
    if args.output:
        save_outputs(args.output, graph, outputs)
        print(f"  outputs written to {args.output}")
    return 0


def cmd_boards(args: argparse.Namespace) -> int:
    from mcugen.boards import board_names, load_board

    for name in board_names():
        b = load_board(name)
        print(f"{name:16s} {b.core:12s} {b.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
