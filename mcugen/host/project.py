"""Write a self-contained firmware project (generated model + runtime + board) and compile it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mcugen import __version__
from mcugen.boards import Board
from mcugen.codegen.render import environment
from mcugen.errors import BuildError
from mcugen.pipeline import Generated
from mcugen.resources import runtime_dir

TARGET = "model"


@dataclass(frozen=True)
class BuildResult:
    directory: Path
    executable: Path
    compile_seconds: float
    files: tuple[str, ...]


def project_files(gen: Generated, board: Board) -> dict[str, bytes]:
    """Every file of the project by relative path. Reads the runtime and board, writes nothing."""
    files: dict[str, bytes] = {k: v.encode() for k, v in gen.files.items()}
    rt = runtime_dir()
    for header in sorted((rt / "include").rglob("*.h")):
        rel = header.relative_to(rt / "include")
        if rel.parts[:2] == ("mcu", "kernels") and rel.stem not in gen.view_model.kernels:
            continue
        files[f"runtime/include/{rel.as_posix()}"] = header.read_bytes()
    sources = ["model.c", "model_data.c", "main.c"]
    for src in sorted((rt / "src").glob("*.c")):
        files[f"runtime/src/{src.name}"] = src.read_bytes()
        sources.append(f"runtime/src/{src.name}")
    for kernel in gen.view_model.kernels:
        src = rt / "kernels" / "reference" / f"{kernel}.c"
        files[f"runtime/kernels/{kernel}.c"] = src.read_bytes()
        sources.append(f"runtime/kernels/{kernel}.c")
    files["main.c"] = (board.directory / "main.c").read_bytes()
    makefile = (
        environment()
        .get_template("Makefile.j2")
        .render(version=__version__, board=board, sources=sources, target=TARGET)
    )
    files["Makefile"] = makefile.encode()
    return files


def write_tree(files: dict[str, bytes], directory: Path) -> None:
    for rel, data in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _staging_dir(out_dir: Path) -> Path:
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))


def _swap_in(new: Path, target: Path) -> None:
    old = None
    if target.exists():
        if not target.is_dir():
            shutil.rmtree(new, ignore_errors=True)
            raise BuildError(f"{target} exists and is not a directory", hint="choose another -o")
        old = target.with_name(f".{target.name}.old.{os.getpid()}")
        target.rename(old)
    new.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def compile_project(directory: Path, board: Board, *, jobs: int = 2) -> BuildResult:
    if shutil.which(board.cc) is None:
        raise BuildError(
            f"compiler '{board.cc}' not found",
            where=f"board {board.name}",
            hint="run the README's set-up command to install it",
        )
    start = time.perf_counter()
    proc = subprocess.run(
        ["make", "-s", f"-j{jobs}", "-C", str(directory)], capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr[-300:])
        raise BuildError(
            f"compiling the generated project failed: {first.strip()}",
            hint="this is a bug in mcugen; please report it with the model",
        )
    exe = directory / TARGET
    return BuildResult(directory, exe, seconds, ())


def build(gen: Generated, board: Board, out_dir: Path) -> BuildResult:
    """Write and compile in a staging directory, then move it to `out_dir` in one rename.

    A failure at any point leaves `out_dir` as it was (absent, or the previous build).
    """
    out_dir = out_dir.resolve()
    files = project_files(gen, board)
    staging = _staging_dir(out_dir)
    try:
        write_tree(files, staging)
        result = compile_project(staging, board)
        _swap_in(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return BuildResult(out_dir, out_dir / TARGET, result.compile_seconds, tuple(sorted(files)))
