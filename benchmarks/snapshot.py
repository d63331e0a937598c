"""Plans and firmware sources before and after a change: the sha256 of `mcugen plan --json` and of
every file `mcugen export` writes, for every shared model (and the bundled example) under a few
option sets, saved to a JSON file and compared later (issue 33: a restructuring keeps plans and
firmware byte-identical, except where it fixes a listed inconsistency).

Each command runs as a user runs it, the real `mcugen` binary in a scratch folder. The version
banner of generated files is kept (same version on both sides); the model path is the same.

Run: python benchmarks/snapshot.py --save before.json [--models a b ...] [--keep-plans DIR]
     python benchmarks/snapshot.py --compare before.json   (exit 1 on any difference)
     python benchmarks/snapshot.py --diff-plans OLD_DIR NEW_DIR
`--keep-plans` also writes every `plan --json` whole; `--diff-plans` lists, field by field, what
differs between two such folders (a JSON path with its model/case count and one example), so a
digest difference can be told apart: a fixed inconsistency, linked code bytes, or a real change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

MCUGEN = Path(sys.executable).with_name("mcugen")
ROOT = Path(__file__).resolve().parents[1]
SHARED_MODELS = ROOT.parent / "shared" / "models"
#: Option sets: the defaults on the host and two boards (one with pools), the reference kernels,
#: paging under a RAM budget to the disco-f746ng's SDRAM and on the host.
CASES = {
    "host": [],
    "f767": ["--board", "nucleo-f767"],
    "f746": ["--board", "disco-f746ng"],
    "f767-ref": ["--board", "nucleo-f767", "--kernels", "reference"],
    "f746-budget": ["--board", "disco-f746ng", "--ram-budget", "32768"],
    "host-budget": ["--ram-budget", "4096", "--pager", "belady"],
}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _run(argv: list[str], cwd: Path) -> tuple[int, bytes]:
    done = subprocess.run(
        [str(MCUGEN), *argv], cwd=cwd, capture_output=True, timeout=900, check=False
    )
    return done.returncode, done.stdout if done.returncode == 0 else done.stderr


def snapshot(model: Path, flags: list[str], keep: Path | None = None) -> dict[str, str]:
    """File -> digest: 'plan' (plan --json, or its error), then every exported file. `keep`: the
    file to write the plan's JSON (or error) to."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        code, out = _run(["plan", str(model), "--json", *flags], work)
        found = {"plan": f"exit {code} {_digest(out)}"}
        if keep is not None:
            keep.write_bytes(out if code == 0 else json.dumps({"exit": code}).encode())
        code, out = _run(["export", str(model), "-o", "lib", "-q", *flags], work)
        if code != 0:
            found["export"] = f"exit {code} {_digest(out)}"
            return found
        for path in sorted((work / "lib").rglob("*")):
            if path.is_file():
                found[str(path.relative_to(work / "lib"))] = _digest(path.read_bytes())
    return found


def json_paths(value: object, prefix: str = "") -> dict[str, object]:
    """Every leaf of a JSON value by its path ("fit.ram.arena", "order[3]")."""
    if isinstance(value, dict):
        found: dict[str, object] = {}
        for k, v in value.items():
            found |= json_paths(v, f"{prefix}.{k}" if prefix else k)
        return found
    if isinstance(value, list):
        found = {}
        for i, v in enumerate(value):
            found |= json_paths(v, f"{prefix}[{i}]")
        return found
    return {prefix: value}


def diff_plans(old: Path, new: Path) -> int:
    """Per JSON path (list indices folded to []), how many plans differ there, and one example."""
    import re

    fields: dict[str, list[str]] = {}
    files = sorted({p.name for p in old.glob("*.json")} | {p.name for p in new.glob("*.json")})
    for name in files:
        a, b = (
            json_paths(json.loads((d / name).read_text())) if (d / name).exists() else {}
            for d in (old, new)
        )
        for path in sorted(set(a) | set(b)):
            if a.get(path) != b.get(path):
                key = re.sub(r"\[\d+\]", "[]", path)
                fields.setdefault(key, [])
                example = f"{name[:-5]}: {path} {a.get(path, '-')} -> {b.get(path, '-')}"
                if not fields[key] or fields[key][-1].split(":")[0] != name[:-5]:
                    fields[key].append(example)
    print(f"{len(files)} plans compared\n| field | plans differing | example |\n|---|---|---|")
    for key, examples in sorted(fields.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"| {key} | {len(examples)} | {examples[0][:150]} |")
    return 1 if fields else 0


def models(names: list[str] | None) -> list[Path]:
    found = sorted(SHARED_MODELS.glob("*.tflite")) if SHARED_MODELS.is_dir() else []
    found.append(ROOT / "examples" / "tiny_cnn_int8.tflite")
    if names:
        found = [m for m in found if m.stem in names]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--save", type=Path, help="write the snapshot here")
    what.add_argument("--compare", type=Path, help="compare with this snapshot")
    what.add_argument("--diff-plans", nargs=2, type=Path, metavar=("OLD", "NEW"))
    parser.add_argument("--models", nargs="*", help="model stems (default: all shared models)")
    parser.add_argument("--cases", nargs="*", choices=sorted(CASES), help="default: all")
    parser.add_argument("--keep-plans", type=Path, help="also write each plan's JSON here")
    args = parser.parse_args()
    if args.diff_plans:
        return diff_plans(*args.diff_plans)
    keep = args.keep_plans
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    now = {
        f"{m.stem} {case}": snapshot(m, flags, keep / f"{m.stem} {case}.json" if keep else None)
        for m in models(args.models)
        for case, flags in CASES.items()
        if not args.cases or case in args.cases
    }
    if args.save:
        args.save.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"{len(now)} snapshots saved to {args.save}")
        return 0
    before = {k: v for k, v in json.loads(args.compare.read_text()).items() if k in now}
    print("| model and case | file | before | after |\n|---|---|---|---|")
    differences = 0
    for key in sorted(set(before) | set(now)):
        old, new = before.get(key, {}), now.get(key, {})
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                differences += 1
                print(f"| {key} | {name} | {old.get(name, '-')} | {new.get(name, '-')} |")
    print(f"{len(now)} snapshots, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
