"""Budgets checked in CI: what mcugen costs, against plain-text files reviewed in diffs.

Each kind has a file `budgets/<kind>.txt` of `name value` lines; lower is better for all:
- `lines`: non-blank lines of the Python package and of the C runtime (caps with headroom);
- `arena`: `mcugen plan`'s arena (static offsets, default options) of every generated irregular
  graph and, when ../shared/models exists, every shared model, and as `<model>.state` the
  persistent area of the models with variable tensors (SVDF, LSTM state; outside the arena);
- `runtime`: code (.text + vectors) and RAM outside the arena and stack (.data + .bss) of the
  bundled model's firmware on the NUCLEO-F767ZI twin, static offsets;
- `instructions`: instructions per inference of the MLPerf Tiny models on that twin
  (QEMU -icount shift=0: counted, not timed; needs ../shared/models).
A measurement above its budget fails (exit 1) unless the budget file changes with it: rerun with
`--update KIND` and commit the new file, so the diff shows the cost. A measurement below its
budget passes and says so. Entries that cannot be measured here (no ../shared) are skipped.
Run: python benchmarks/budgets.py [KIND...] [--update]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = ROOT / "budgets"
SHARED_MODELS = ROOT.parent / "shared" / "models"
MLPERF_TINY = (
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
)
#: Headroom of the line caps written by --update (a cap, not a ratchet on every line).
LINE_HEADROOM = 1.05


def measure_lines() -> dict[str, int]:
    def count(files: list[Path]) -> int:
        return sum(1 for f in files for line in f.read_text().splitlines() if line.strip())

    return {
        "python_package": count(sorted((ROOT / "mcugen").rglob("*.py"))),
        "c_runtime": count(sorted(p for p in (ROOT / "runtime_c").rglob("*") if p.is_file())),
    }


def measure_arena() -> dict[str, int]:
    from mcugen.commands.plan import plan_model
    from mcugen.model.tflite_import import load_model
    from mcugen.options import PlanOptions
    from testgraphs import benchmark_suite

    found = {}
    for name, build in benchmark_suite():
        found[name] = plan_model(build(), PlanOptions()).plan.arena_bytes
    for path in sorted(SHARED_MODELS.glob("*.tflite")) if SHARED_MODELS.is_dir() else []:
        plan = plan_model(load_model(path), PlanOptions()).plan
        found[path.stem] = plan.arena_bytes
        if plan.persistent.bytes:
            found[f"{path.stem}.state"] = plan.persistent.bytes
    return found


def measure_runtime() -> dict[str, int]:
    from mcugen.boards import load_board, resolve_target
    from mcugen.firmware.compile import build
    from mcugen.firmware.sizes import firmware_sizes
    from mcugen.pipeline import generate_from_file

    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    with tempfile.TemporaryDirectory(prefix="mcugen-budget-") as tmp:
        result = build(
            generate_from_file(ROOT / "examples" / "tiny_cnn_int8.tflite"), target, Path(tmp)
        )
        sizes = firmware_sizes(result.executable, target)
    return {"f767_code": sizes.code, "f767_ram_outside_arena_and_stack": sizes.other_ram}


def measure_instructions() -> dict[str, int]:
    if not SHARED_MODELS.is_dir():
        return {}
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from instructions import measure

    with tempfile.TemporaryDirectory(prefix="mcugen-budget-") as tmp:
        return {
            name: measure(SHARED_MODELS / f"{name}.tflite", "nucleo-f767", "opt", Path(tmp))[0]
            for name in MLPERF_TINY
        }


KINDS: dict[str, Callable[[], dict[str, int]]] = {
    "lines": measure_lines,
    "arena": measure_arena,
    "runtime": measure_runtime,
    "instructions": measure_instructions,
}


def read_budget(path: Path) -> dict[str, int]:
    entries = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        if len(fields) != 2 or not fields[1].isdigit():
            raise SystemExit(f"{path}:{number}: expected 'name value', got {line!r}")
        entries[fields[0]] = int(fields[1])
    return entries


def write_budget(kind: str, path: Path, measured: dict[str, int], old: dict[str, int]) -> None:
    """The measured values (line caps with headroom); entries not measured here are kept."""
    values = dict(old)
    for name, value in measured.items():
        values[name] = int(value * LINE_HEADROOM) if kind == "lines" else value
    header = (
        f"# {kind} budget: `name value`, lower is better; "
        f"python benchmarks/budgets.py --update {kind}\n"
    )
    body = "".join(f"{name} {values[name]}\n" for name in sorted(values))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(header + body)
    tmp.replace(path)


def check(kind: str, update: bool) -> int:
    """Print one row per entry; the number of entries above budget (0 after --update)."""
    path = BUDGETS / f"{kind}.txt"
    old = read_budget(path) if path.is_file() else {}
    measured = KINDS[kind]()
    if update:
        write_budget(kind, path, measured, old)
        print(f"{kind}: {len(measured)} entries written to {path.relative_to(ROOT)}")
        return 0
    worse = 0
    print(f"| {kind} | budget | measured | change | |")
    print("|---|---|---|---|---|")
    for name in sorted(set(old) | set(measured)):
        budget, value = old.get(name), measured.get(name)
        if value is None:
            print(f"| {name} | {budget:,} | - | | skipped: not measurable here |")
            continue
        if budget is None:
            worse += 1
            print(f"| {name} | - | {value:,} | | FAIL: no budget; run --update {kind} |")
            continue
        if value > budget:
            verdict = "FAIL: over budget"
        elif kind == "lines":
            verdict = f"ok: {budget - value:,} lines left under the cap"
        else:
            verdict = "ok" if value == budget else "better: --update to lock it in"
        worse += value > budget
        print(f"| {name} | {budget:,} | {value:,} | {value - budget:+,} | {verdict} |")
    return worse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="*", metavar="KIND", help=f"any of: {', '.join(KINDS)}")
    parser.add_argument("--update", action="store_true", help="rewrite the budget files")
    args = parser.parse_args(argv)
    unknown = [k for k in args.kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown budget kind {unknown[0]!r}; choose from {', '.join(KINDS)}")
    failures = sum(check(kind, args.update) for kind in args.kinds or KINDS)
    if failures:
        print(
            f"{failures} entries over budget: make them cheaper, or run "
            "`python benchmarks/budgets.py --update KIND` and commit the file with the change"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
