"""One model, one board, every command: the RAM and flash figures of `plan --json`, `build`,
`run --json`, `verify --json`, `measure --json` and `report --json` side by side, and `export`'s
library arena against `plan`'s with the library's terms (issues 31 and
33: the same arena, model state, runtime state, stack, total RAM, external RAM and flash, under
the same names, from every command, for the same options).

Each command runs as a user runs it, the real `mcugen` binary in a scratch folder, on the board's
QEMU twin (`--emulate`). `plan` counts the RAM term by term; `build`, `run` and `verify` read the
linked ELF; `report` embeds the plan's verdict. A difference is a bug.

Run: python benchmarks/same_figures.py [--models a b ...] [--boards nucleo-f767 disco-f746ng]
     [--options "--kernels reference"];
prints a table, exit 1 on any difference. tests/cli/test_same_figures.py runs it on a few models.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

MCUGEN = Path(sys.executable).with_name("mcugen")
SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
#: The figures every command must agree on (plan.fit.RamUse's JSON names, and the linked flash).
KEYS = ("arena", "model_state", "runtime_state", "stack", "total", "size", "slow", "flash")
#: build's text rows, by RamUse name.
BUILD_ROWS = {"arena": "arena", "model state": "model_state", "runtime state": "runtime_state"}


def _mcugen(*args: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> str:
    """stdout of the real binary; exit codes other than `ok` raise."""
    proc = subprocess.run(
        [str(MCUGEN), *args], cwd=cwd, capture_output=True, text=True, timeout=900
    )
    if proc.returncode not in ok:
        raise RuntimeError(f"mcugen {' '.join(args)}: exit {proc.returncode}: {proc.stderr}")
    return proc.stdout


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def build_figures(text: str) -> dict[str, int]:
    """The RAM block `mcugen build` prints: "RAM: T of S bytes", then a row per part."""
    found: dict[str, int] = {}
    head = re.search(r"^  RAM: +([\d,]+) of ([\d,]+) bytes", text, re.M)
    assert head is not None, text
    found["total"], found["size"] = _number(head[1]), _number(head[2])
    in_ram = text[head.end() :]
    for name, key in (*BUILD_ROWS.items(), ("stack", "stack")):
        row = re.search(rf"^    {name} +([\d,]+)$", in_ram, re.M)
        found[key] = _number(row[1]) if row else 0
    slow = re.search(r"^  \S+: +([\d,]+) bytes \(outside the RAM\)", text, re.M)
    found["slow"] = _number(slow[1]) if slow else 0
    flash = re.search(r"^  flash: +([\d,]+) of", text, re.M)
    assert flash is not None, text
    found["flash"] = _number(flash[1])
    return found


def figures(
    model: Path, board: str, workdir: Path, options: tuple[str, ...] = ()
) -> dict[str, dict[str, int]]:
    """command -> the RAM and flash figures it gives for `model` on `board`'s twin, every command
    run with the same `options` (planning flags such as --kernels reference)."""
    on = ["--board", board, "--emulate", *options]
    m = str(model)
    plan = json.loads(_mcugen("plan", m, *on, "--json", "--no-strategies", cwd=workdir))
    build = build_figures(_mcugen("build", m, *on, "-o", "out", cwd=workdir))
    run = json.loads(_mcugen("run", m, *on, "--json", cwd=workdir))
    verify = json.loads(_mcugen("verify", m, *on, "--samples", "1", "--json", cwd=workdir))
    measure = json.loads(_mcugen("measure", m, *on, "--json", cwd=workdir))
    report = ["report", m, "--board", board, *options, "--no-run", "-o", "r.html"]
    _mcugen(*report, "--json", "r.json", cwd=workdir)  # for the board itself, not its twin
    # exit 3 when the board itself cannot hold the plan (e.g. its port lacks the SDRAM yet)
    mine = ["plan", m, "--board", board, *options, "--json"]
    board_plan = json.loads(_mcugen(*mine, cwd=workdir, ok=(0, 3)))
    on_board = json.loads((workdir / "r.json").read_text())["verdict"]
    return {
        **library_figures(model, board, workdir, options),
        "plan": _pick(plan["fit"]["ram"], plan["fit"]["flash_need"]),
        "build": build,
        "run": _pick(run["ram"], run["sizes"]["flash_bytes"]),
        "verify": _pick(verify["ram"], verify.get("sizes", {}).get("flash_bytes")),
        "measure": _pick(measure["ram"], measure["sizes"]["flash_bytes"]),
        "report (board)": _pick(on_board["ram"], on_board.get("flash_need")),
        "plan (board)": _pick(board_plan["fit"]["ram"], board_plan["fit"]["flash_need"]),
    }


#: What `export --board` and `plan --board --keep-input no --pools single` (the library's
#: one arena, the input written by your firmware) must agree on; the other keys are not given.
LIBRARY_KEYS = ("arena", "slow")


def library_figures(
    model: Path, board: str, workdir: Path, options: tuple[str, ...] = ()
) -> dict[str, dict[str, int]]:
    """`export --board` (for the board itself) and `plan` with the library's terms: the arena
    (its fast part when paged) and the paged buffers; empty when the options include a flag
    export does not take (--pools: a library has one arena)."""
    if "--pools" in options:
        return {}
    on = ("--board", board, *options)
    text = _mcugen("export", str(model), *on, "-o", "lib", cwd=workdir, ok=(0, 3))
    arena = re.search(r"^  arena: +(\d+) bytes|\(arena ([\d,]+)", text, re.M)
    assert arena is not None, text
    slow = re.search(r"^  slow: +(\d+) bytes", text, re.M)
    exported = {"arena": _number(arena[1] or arena[2]), "slow": _number(slow[1]) if slow else 0}
    library = ("--keep-input", "no", "--pools", "single", "--json", "--no-strategies")
    plan = json.loads(_mcugen("plan", str(model), *on, *library, cwd=workdir, ok=(0, 3)))
    paging = plan.get("paging") or {}
    planned = {
        "arena": int(paging.get("fast_bytes", plan["arena_bytes"])),
        "slow": int(paging.get("slow_bytes", 0)),
    }
    unset = dict.fromkeys(KEYS, -1)
    return {"plan (library)": unset | planned, "export": unset | exported}


def boards_figures(
    model: Path, boards: str, workdir: Path, options: tuple[str, ...] = ()
) -> dict[str, dict[str, int]]:
    """command -> "arena b" and "flash b" for each board b of `--boards` (comma-separated) on
    the twins: `plan --boards` builds each board's firmware as `run --boards` does."""
    on = ["--boards", boards, "--emulate", *options, "--json"]
    plan = json.loads(_mcugen("plan", str(model), *on, cwd=workdir))
    run = json.loads(_mcugen("run", str(model), *on, cwd=workdir))
    return {
        name: {
            f"{k} {b['board']}": int(b[f"{k}_bytes"]) for b in found["boards"] for k in PER_BOARD
        }
        for name, found in (("plan", plan), ("run", run))
    }


#: What `plan --boards` and `run --boards` must agree on, per board.
PER_BOARD = ("arena", "flash")


def boards_differences(found: dict[str, dict[str, int]]) -> list[str]:
    """Per board, what `run --boards` says and `plan --boards` does not."""
    return pair_differences(found, "plan", "run")


def training_figures(
    model: Path, data: Path, on: tuple[str, ...], workdir: Path
) -> dict[str, dict[str, int]]:
    """`plan --trainable all` and `train --trainable all --data` with the same flags `on`
    (--board, --emulate, --ram-budget ...): the arena in RAM (the fast part when paged), the
    model state, the total RAM and the external RAM when on a board, the paged bytes per step,
    and the schedule (operators recomputed, its cost)."""
    m = str(model)
    plan = json.loads(
        _mcugen("plan", m, "--trainable", "all", *on, "--json", "--no-strategies", cwd=workdir)
    )
    train = json.loads(
        _mcugen("train", m, "--data", str(data), "--trainable", "all", *on, "--json", cwd=workdir)
    )
    found = {"plan": _schedule(plan.get("schedule")), "train": _schedule(train.get("schedule"))}
    paging = plan.get("paging") or {}
    found["plan"] |= {
        "arena": paging.get("fast_bytes", plan["arena_bytes"]),
        "model_state": plan["persistent_bytes"],
        "paged_out": paging.get("bytes_out", 0),
    }
    found["train"] |= {
        "arena": train["arena_bytes"],
        "model_state": train["state_bytes"],
        "paged_out": (train.get("paging") or {}).get("bytes_out_per_step", 0),
    }
    if "fit" in plan:  # a board: the RAM the verdict counts and the RAM train linked
        ram, state = plan["fit"]["ram"], train["state"]
        found["plan"] |= {"total": ram["total"], "size": ram["size"], "slow": ram["slow"]}
        found["train"] |= {
            "total": state["ram_bytes"],
            "size": state["ram_size"],
            "slow": state["slow_section_bytes"],
        }
    return found


def _schedule(schedule: dict[str, Any] | None) -> dict[str, int]:
    if not schedule:
        return {"recomputed": 0, "schedule_cost": 0}
    return {"recomputed": len(schedule["recomputed"]), "schedule_cost": int(schedule["cost"])}


def pair_differences(found: dict[str, dict[str, int]], first: str, second: str) -> list[str]:
    """Every figure where `second` says otherwise than `first` (or one of them is missing)."""
    a, b = found[first], found[second]
    return [
        f"{second} {k} {b.get(k, -1):,} != {first} {a.get(k, -1):,}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]


def _pick(ram: dict[str, Any], flash: int | None) -> dict[str, int]:
    """The RAM figures, and the flash when the command gives it (-1: it does not)."""
    found = {k: int(ram[k] or 0) for k in KEYS if k != "flash"}
    return found | {"flash": -1 if flash is None else int(flash)}


def differences(found: dict[str, dict[str, int]]) -> list[str]:
    """What differs: the twin's commands among themselves, and report against plan for the board
    itself (the board's port and the twin's differ by a few bytes of runtime state)."""
    bad = []
    twin = ("plan", "build", "run", "verify", "measure")
    library = ("plan (library)", "export") if "export" in found else ()
    for group in (twin, ("plan (board)", "report (board)"), library):
        if not group:
            continue
        first = found[group[0]]
        for name in group[1:]:
            for k in KEYS:
                if -1 not in (found[name][k], first[k]) and found[name][k] != first[k]:
                    bad.append(f"{name} {k} {found[name][k]:,} != {group[0]} {first[k]:,}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=None, help="model stems (default: all)")
    ap.add_argument("--boards", nargs="*", default=["nucleo-f767", "disco-f746ng"])
    ap.add_argument(
        "--options", default="", help='planning flags for every command, e.g. "--kernels reference"'
    )
    args = ap.parse_args()
    stems = args.models or sorted(p.stem for p in SHARED_MODELS.glob("*.tflite"))
    print("| model | board | command | " + " | ".join(KEYS) + " |")
    print("|---|---|---|" + "---|" * len(KEYS))
    failed = 0
    for stem in stems:
        for board in args.boards:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    model = SHARED_MODELS / f"{stem}.tflite"
                    found = figures(model, board, Path(tmp), tuple(args.options.split()))
                except RuntimeError as exc:
                    print(f"| {stem} | {board} | not built: {str(exc).splitlines()[-1][:120]} |")
                    continue
            for name, row in found.items():
                cells = " | ".join("-" if row[k] == -1 else f"{row[k]:,}" for k in KEYS)
                print(f"| {stem} | {board} | {name} | {cells} |")
            for line in differences(found):
                failed += 1
                print(f"DIFFERENT {stem} {board}: {line}")
    print(f"{failed} differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
