"""`mcugen export`: the model as a C library (and a build-system package) for your firmware."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from mcugen.boards import board_names, load_board, resolve_target
from mcugen.commands._common import load_for, plan_options
from mcugen.commands._options import model_options
from mcugen.errors import DoesNotFit, McugenError
from mcugen.firmware.export import (
    LibraryFit,
    check_name,
    default_name,
    export_files,
    library_fit,
)
from mcugen.options import PlanOptions
from mcugen.outputs import check_output_dir, staged_directory, write_tree
from mcugen.pipeline import Generated, check_paging_pays, generate_from_file, prepare
from mcugen.plan.target import memory_target

HELP = "the model as a C library for your own firmware"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (("output", "folder"),)


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p, board=False, with_pools=False)
    p.add_argument("-o", "--output", type=Path, required=True, help="new directory to write")
    p.add_argument(
        "--format",
        default="lib",
        metavar="NAME",
        help="lib (default: include/ and src/), cmake, platformio, zephyr or arduino",
    )
    p.add_argument("--name", default=None, help="the C prefix (default: from the model's name)")
    p.add_argument("--board", default=None, help="kernel variants for this board's core")
    p.add_argument("--cpu", default=None, help="kernel variants for this core, e.g. cortex-m7")
    p.add_argument(
        "--arena-section",
        default="",
        metavar="NAME",
        help="linker section of the built-in arena, e.g. .dtcm_bss (default: .bss)",
    )


def cmd_export(args: argparse.Namespace) -> int:
    name = check_name(args.name) if args.name else check_name(default_name(args.model.stem))
    out = Path(args.output)
    check_output_dir(out)
    core = export_core(args)
    options = library_options(args, core)
    gen = generate_from_file(args.model, options)
    paging = gen.plan.paging
    budget = options.ram_budget
    if paging is not None and options.target is not None and budget:
        unbudgeted = replace(options, target=replace(options.target, ram_budget=None))
        graph, _, unpaged = prepare(load_for(args), unbudgeted)
        check_paging_pays(graph, unpaged, gen.plan, budget)
    fit = board_fit(args.board, gen)
    if fit is not None and not fit.fits:
        print(f"mcugen: the library {fit.summary()}")
        raise DoesNotFit(
            f"library {name} does not fit {fit.board}: it needs {fit.ram:,} bytes of RAM and "
            f"{fit.weights:,} of flash, the board has {fit.ram_room:,} and {fit.flash_size:,}",
            hint="`mcugen plan --board` shows what pages or patches would fit; export for the "
            "core alone with --cpu",
        )
    files = export_files(gen, name, fmt=args.format, core=core, arena_section=args.arena_section)
    write_directory(files, out)
    sources = sum(1 for f in files if f.endswith(".c"))
    print(f"mcugen: exported {args.model} as library {name} ({args.format}) to {out}/")
    header = "src" if args.format == "arduino" else "include"
    print(f"  {header}/{name}.h, {sources} C files ({len(files)} files), kernels for {core}")
    print(f"  arena:    {gen.view_model.arena_bytes} bytes ({name.upper()}_ARENA_BYTES)")
    if paging is not None and paging.slow_bytes:
        print(f"  slow:     {paging.slow_bytes} bytes of paged buffers, an array in RAM")
    print(f"  weights:  {sum(len(c.data) for c in gen.view_model.constants)} bytes")
    if fit is not None:
        print(f"  {fit.summary()}")
    return 0


def library_options(args: argparse.Namespace, core: str) -> PlanOptions:
    """The plan of the library: for `--board`, against that board's memories as `plan --board`
    plans (its RAM for the kernel choice and patch stage, its external RAM for paging), in one
    arena (`--pools single`: the library has one) and, by default, with the input not kept
    (your firmware writes it before each inference; there is no runner's copy to save)."""
    target = resolve_target(load_board(args.board), emulate=False) if args.board else None
    options = plan_options(args, target=target)
    return replace(options, core=core, pools="single")


def board_fit(board: str | None, gen: Generated) -> LibraryFit | None:
    """The library against `--board`'s RAM and flash (None without `--board`)."""
    if board is None:
        return None
    target = memory_target(resolve_target(load_board(board), emulate=False))
    return library_fit(gen, target.board, target.ram_size, target.stack, target.flash_size)


def export_core(args: argparse.Namespace) -> str:
    """The core whose kernel variants the export uses: `--cpu`, else `--board`'s, else any."""
    if args.cpu and args.board:
        raise McugenError("--cpu and --board conflict", hint="give one of them")
    if args.board:
        return load_board(args.board).core
    if args.cpu is None:
        return "host"
    cores = sorted({load_board(b).core for b in board_names()} - {"host"})
    if args.cpu not in cores:
        raise McugenError(f"unknown --cpu {args.cpu!r}", hint=f"choose one of {', '.join(cores)}")
    return str(args.cpu)


def write_directory(files: dict[str, str], out: Path) -> None:
    """All of `files` under `out`, or nothing (mcugen/outputs.py: staged, then renamed)."""
    with staged_directory(out) as staging:
        write_tree({k: v.encode() for k, v in files.items()}, staging)
