"""`mcugen plan --board` against the linker: for every shared model mcugen builds and every board,
the verdict's RAM and flash (as `plan --board --json` reports them) next to the firmware `mcugen
build` links, and whether verdict and build agree on fitting.
Run: python benchmarks/fit.py [--allocator static|compacting|planned] [--models a b ...];
exit 1 on any difference.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcugen import cli
from mcugen.boards import board_names, load_board, resolve_target
from mcugen.errors import BuildError, UnsupportedError
from mcugen.firmware.compile import build
from mcugen.firmware.sizes import firmware_sizes
from mcugen.options import PlanOptions
from mcugen.pipeline import generate_from_file
from mcugen.plan.dynamic import ALLOCATORS, Allocator

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


def verdict(model: Path, board: str, allocator: str) -> dict[str, Any]:
    """The "fit" object of `mcugen plan MODEL --board BOARD --json`."""
    out = io.StringIO()
    argv = ["plan", str(model), "--board", board, "--allocator", allocator]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        cli.main([*argv, "--json", "--no-strategies"])
    fit: dict[str, Any] = json.loads(out.getvalue())["fit"]
    return fit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allocator", default="static", choices=ALLOCATORS.names())
    parser.add_argument("--models", nargs="*", help="model stems (default: every shared model)")
    args = parser.parse_args()
    allocator = Allocator(args.allocator)
    boards = [b for b in board_names() if not load_board(b).is_host]
    models = sorted(SHARED_MODELS.glob("*.tflite"))
    if args.models:
        models = [m for m in models if m.stem in args.models]
    columns = "verdict RAM | linked RAM | verdict flash | linked flash | verdict | build"
    print(f"| model | board | {columns} | |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = differ = 0
    with tempfile.TemporaryDirectory(prefix="mcugen-fit-") as tmp:
        for model in models:
            try:
                # as `mcugen build` plans firmware: the input kept when that saves RAM
                options = PlanOptions(allocator=allocator, keep_input="auto")
                gen = generate_from_file(model, options)
            except UnsupportedError:
                continue
            for board in boards:
                fit = verdict(model, board, allocator)
                target = resolve_target(load_board(board), emulate=False)
                ram = flash = "-"
                try:
                    result = build(gen, target, Path(tmp) / f"{model.stem}-{board}")
                    sizes = firmware_sizes(result.executable, target)
                    ram, flash, built = f"{sizes.ram_bytes:,}", f"{sizes.flash_bytes:,}", "built"
                    same = (
                        fit["fits"]
                        and sizes.ram_bytes == fit["ram_need"]
                        and sizes.flash_bytes == fit["flash_need"]
                    )
                except BuildError as err:
                    built = "overflow" if "overflowed" in err.line() else "refused"
                    same = not fit["fits"]
                rows += 1
                differ += not same
                print(
                    f"| {model.stem} | {board} | {fit['ram_need']:,} | {ram} "
                    f"| {fit['flash_need']:,} | {flash} | {'fits' if fit['fits'] else 'no'} "
                    f"| {built} | {'ok' if same else 'DIFFERS'} |"
                )
    print(f"{rows - differ} of {rows} model/board pairs agree")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
