"""`mcugen flash`: build the firmware for a real board and write it through its debug probe.

The tool (mcugen/link/flash.py) is chosen before anything is built, so a missing tool costs no
build.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from mcugen.boards import load_board, resolve_target, with_mlperf_mode
from mcugen.commands._common import generate_for, print_memory
from mcugen.commands._options import mlperf_mode_option, model_options
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.link.flash import TOOLS as FLASH_TOOLS
from mcugen.link.flash import choose_tool, write_firmware

HELP = "build for a real board and write it through its probe"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (("output", "folder"),)


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p, emulate=False)
    p.add_argument(
        "--probe",
        choices=FLASH_TOOLS,
        default=None,
        help="flash tool (default: the first installed of pyocd, the board's, st-flash, openocd)",
    )
    mlperf_mode_option(p)
    p.add_argument("-o", "--output", type=Path, default=None, help="keep the project here")


def cmd_flash(args: argparse.Namespace) -> int:
    if args.board is None:
        raise McugenError("say which board to flash", hint="add --board, e.g. --board nucleo-f767")
    board = load_board(args.board)
    if board.is_host or board.emulator:
        raise McugenError(
            f"board '{board.name}' runs only as {'a process' if board.is_host else 'QEMU'}; "
            "there is nothing to flash",
            hint=f"run it with mcugen run --board {board.name}"
            + ("" if board.is_host else " --emulate"),
        )
    target = with_mlperf_mode(resolve_target(board, emulate=False), args.mlperf_mode)
    tool = choose_tool(board, args.probe)
    gen = generate_for(args, target)
    with tempfile.TemporaryDirectory(prefix="mcugen-flash-") as tmp:
        out = args.output or Path(tmp) / "project"
        result = build(gen, target, out)
        start = time.perf_counter()
        write_firmware(tool, board, result.executable)
        seconds = time.perf_counter() - start
        print(f"mcugen: flashed {args.model} to {board.name} with {tool} in {seconds:.1f} s")
        if args.output:
            print(f"  project:  {result.directory}/")
        print_memory(gen, target, result)
    mode = "" if args.mlperf_mode == "performance" else f" --mlperf-mode {args.mlperf_mode}"
    print(
        f"  next: mcugen measure {args.model} --board {board.name} --port /dev/ttyACM0 "
        f"{'--mlperf' + mode if mode else '[--mlperf]'}"
    )
    return 0
