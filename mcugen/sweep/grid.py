"""What a sweep runs: models (files or folders) x boards x option sets x jobs, each job keyed by
the model's content hash, the board, the options in canonical form, the job and mcugen's version.

A grid file is TOML: each key of `[options]` is a planning option by its command-line name
(mcugen.options.CHOICES) with one value or a list of values; the sweep runs every combination.
`[[set]]` tables add option sets as they are (no combination). No file: one set, the defaults.

    [options]
    kernels = ["opt", "memory"]
    order = ["auto", "stored"]

    [[set]]
    tflm_plan = true
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcugen import __version__
from mcugen.errors import McugenError
from mcugen.options import options_from

JOBS = ("plan", "estimate", "build", "run", "verify")
MODEL_SUFFIXES = (".tflite", ".onnx")


@dataclass(frozen=True, order=True)
class Job:
    """One unit of work: sortable by what the results table shows first."""

    model_name: str
    board: str
    options: str  # canonical JSON of the option set ("{}": the defaults)
    job: str
    model_sha256: str
    model_path: str
    version: str = __version__

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.model_sha256, self.board, self.options, self.job, self.version)


def canonical(options: dict[str, Any]) -> str:
    return json.dumps(options, sort_keys=True, separators=(",", ":"))


def option_sets(grid: Path | None) -> list[str]:
    """The grid file's option sets in canonical form, each checked as the API would build it
    (one error line naming the file for a bad name or value)."""
    if grid is None:
        return [canonical({})]
    try:
        table = tomllib.loads(grid.read_text())
    except FileNotFoundError:
        raise McugenError("grid file not found", where=str(grid)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise McugenError(f"not a TOML file ({exc})", where=str(grid)) from None
    unknown = sorted(set(table) - {"options", "set"})
    if unknown:
        raise McugenError(
            f"unknown table '{unknown[0]}'", where=str(grid), hint="use [options] and [[set]]"
        )
    varied = table.get("options", {})
    listed = table.get("set", [])
    if not isinstance(varied, dict) or not isinstance(listed, list):
        raise McugenError("[options] is a table, [[set]] a list of tables", where=str(grid))
    names = sorted(varied)
    values = [v if isinstance(v, list) else [v] for v in (varied[n] for n in names)]
    sets = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]
    sets = (sets if varied or not listed else []) + [dict(s) for s in listed]
    found: list[str] = []
    for chosen in sets:
        try:
            options_from(chosen)
        except McugenError as exc:
            raise McugenError(exc.what, where=str(grid), hint=exc.hint) from None
        if canonical(chosen) not in found:
            found.append(canonical(chosen))
    if not found:
        raise McugenError("no option set", where=str(grid), hint="add [options] or [[set]]")
    return found


def model_files(paths: Sequence[Path]) -> list[Path]:
    """The model files named, folders expanded to their .tflite and .onnx files (sorted)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.suffix.lower() in MODEL_SUFFIXES)
        elif path.is_file():
            files.append(path)
        else:
            raise McugenError("no such model file or folder", where=str(path))
    if not files:
        raise McugenError("no .tflite or .onnx model found", where=", ".join(map(str, paths)))
    return files


def parse_list(text: str, allowed: Sequence[str] | None, what: str) -> list[str]:
    """A comma-separated list, each item checked against `allowed` (None: anything)."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise McugenError(f"no {what} given", hint=f"name one or more {what}, comma-separated")
    for item in items:
        if allowed is not None and item not in allowed:
            raise McugenError(f"unknown {what[:-1]} '{item}'", hint=f"choose {', '.join(allowed)}")
    return list(dict.fromkeys(items))


def expand(
    models: Sequence[Path], boards: Sequence[str], sets: Sequence[str], jobs: Sequence[str]
) -> list[Job]:
    """Every job of the sweep, sorted (the order the table prints and the pool submits)."""
    found = []
    for path in model_files(models):
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        for board, options, job in itertools.product(boards, sets, jobs):
            found.append(Job(path.name, board, options, job, sha, str(path)))
    unique: dict[tuple[str, ...], Job] = {}
    for each in sorted(found):  # two files with the same bytes are one model: the first name
        unique.setdefault(each.key, each)
    return sorted(unique.values())


def check_boards(boards: Sequence[str]) -> None:
    """Every board exists (the board loader's one error line otherwise)."""
    from mcugen.boards import load_board

    for board in boards:
        load_board(board)
