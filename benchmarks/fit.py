"""`mcugen plan --board` against the linker: for every shared model mcugen builds and every board,
the fit verdict's RAM (arena + stack + firmware RAM) next to the linked firmware's .data + .bss +
.stack, and whether the verdict and the build agree on fitting.
Run: python benchmarks/fit.py [--allocator static|compacting|planned]; exit 1 on any difference.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from mcugen.boards import board_names, load_board, resolve_target
from mcugen.errors import BuildError, UnsupportedError
from mcugen.host.project import board_limits, build
from mcugen.host.sizes import firmware_sizes
from mcugen.pipeline import PlanOptions, generate_from_file
from mcugen.plan.dynamic import Allocator
from mcugen.plan.fit import fit_of, weight_bytes

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allocator", default="static", choices=[a.value for a in Allocator])
    args = parser.parse_args()
    allocator = Allocator(args.allocator)
    boards = [b for b in board_names() if not load_board(b).is_host]
    print("| model | board | verdict RAM | linked RAM | verdict | build | |")
    print("|---|---|---|---|---|---|---|")
    rows = differ = 0
    with tempfile.TemporaryDirectory(prefix="mcugen-fit-") as tmp:
        for model in sorted(SHARED_MODELS.glob("*.tflite")):
            try:
                gen = generate_from_file(model, PlanOptions(allocator=allocator))
            except UnsupportedError:
                continue
            for board in boards:
                target = resolve_target(load_board(board), emulate=False)
                limits = board_limits(target)
                fit = fit_of(gen.graph, gen.plan, allocator, weight_bytes(gen.graph), limits)
                linked, built = "-", "refused"
                try:
                    result = build(gen, target, Path(tmp) / f"{model.stem}-{board}")
                    ram = firmware_sizes(result.executable, target).ram_bytes
                    linked, built = f"{ram:,}", "built"
                    same = ram == fit.ram_need and fit.fits
                except BuildError as err:
                    same = not fit.fits or "overflowed" in err.line()  # flash: code on top
                    built = "overflow" if "overflowed" in err.line() else "refused"
                rows += 1
                differ += not same
                verdict = "fits" if fit.fits else "no"
                print(
                    f"| {model.stem} | {board} | {fit.ram_need:,} | {linked} | {verdict} "
                    f"| {built} | {'ok' if same else 'DIFFERS'} |"
                )
    print(f"{rows - differ} of {rows} model/board pairs agree")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
