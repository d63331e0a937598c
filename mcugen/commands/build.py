"""`mcugen build`: generate the firmware project for a board, compile it, print its sizes."""

from __future__ import annotations

import argparse
from pathlib import Path

from mcugen.commands._common import generate_for, print_memory, target_for
from mcugen.commands._options import mlperf_mode_option, model_options
from mcugen.firmware.compile import build
from mcugen.outputs import check_output_dir

HELP = "generate C and compile it for a board"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (("output", "folder"),)


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p)
    mlperf_mode_option(p)
    p.add_argument("-o", "--output", type=Path, default=None, help="project directory")


def cmd_build(args: argparse.Namespace) -> int:
    target = target_for(args)
    suffix = "-qemu" if target.emulate else ""
    out = args.output or Path("build") / f"{args.model.stem}-{target.board.name}{suffix}"
    check_output_dir(out)  # before planning: a folder of the user's is refused at once
    gen = generate_for(args, target)
    result = build(gen, target, out)
    print(f"mcugen: built {args.model} for {target.label} in {result.compile_seconds:.2f} s")
    print(f"  project:  {result.directory}/ ({len(result.files)} files)")
    print(f"  output:   {result.executable}")
    print_memory(gen, target, result)
    return 0
