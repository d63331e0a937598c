"""Compile a firmware project (firmware/project.py) with the board's compiler, in a staging
directory that replaces the output folder in one rename; and link one only to measure it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from mcugen import progress
from mcugen.boards import Target
from mcugen.errors import BuildError
from mcugen.firmware.fits import check_fits
from mcugen.firmware.project import ELF_TARGET, executable_name, project_files
from mcugen.firmware.sizes import FirmwareSizes, firmware_sizes
from mcugen.outputs import staged_directory, write_tree
from mcugen.pipeline import Generated


@dataclass(frozen=True)
class BuildResult:
    directory: Path
    executable: Path
    compile_seconds: float
    files: tuple[str, ...]


#: Region size when linking only to measure: large enough for any model, small enough that
#: flash below RAM never reaches it.
_MEASURE_REGION = 128 << 20


def linked_sizes(gen: Generated, target: Target) -> FirmwareSizes:
    """Flash and RAM of the firmware `build` would link for `gen` on `target`, measured by
    compiling and linking it in a scratch directory with both memory regions widened, so that a
    firmware too large for the board still links and says by how much (`mcugen plan --board`).
    The sections hold the same bytes as in the real link: only the regions' lengths differ."""
    flash = target.flash
    room = flash.origin < target.ram.origin and target.ram.origin - flash.origin
    wide = replace(
        target,
        flash=replace(flash, size=min(room or _MEASURE_REGION, _MEASURE_REGION)),
        ram=replace(target.ram, size=_MEASURE_REGION),
    )
    with tempfile.TemporaryDirectory(prefix="mcugen-measure-") as tmp:
        write_tree(project_files(gen, wide), Path(tmp))
        compile_project(Path(tmp), wide)
        return firmware_sizes(Path(tmp) / ELF_TARGET, target)


def compile_project(directory: Path, target: Target, *, jobs: int = 2) -> float:
    cc = target.port_board.cc
    if shutil.which(cc) is None:
        raise BuildError(
            f"compiler '{cc}' not found",
            where=f"board {target.board.name}",
            hint="run scripts/install.sh (or apt-get install gcc-arm-none-eabi)",
        )
    start = time.perf_counter()
    cmd = ["make", "-s", f"-j{jobs}", "-C", str(directory)]
    launcher = os.environ.get("MCUGEN_CC_LAUNCHER", "").strip()
    if launcher:  # a compiler cache such as ccache: the same objects, built once
        if shutil.which(launcher.split()[0]) is None:
            raise BuildError(
                f"compiler launcher '{launcher}' not found",
                where="environment variable MCUGEN_CC_LAUNCHER",
                hint="install it (apt-get install ccache) or unset MCUGEN_CC_LAUNCHER",
            )
        cmd.append(f"CC={launcher} {cc}")
    with progress.step(f"compiling for {target.label}"):
        returncode, stderr = _run_make(cmd, directory)
    seconds = time.perf_counter() - start
    if returncode != 0:
        raise _compile_error(stderr, target)
    return seconds


def _run_make(cmd: list[str], directory: Path) -> tuple[int, str]:
    """Run `cmd` (make and the compilers under it) in a process group of its own, with the
    compilers' temporary files in `directory` (TMPDIR): on Ctrl-C or any other exception the
    whole group is stopped and waited for, so no compiler goes on writing, and whatever it left
    goes with `directory`. (return code, stderr)"""
    scratch = directory / ".cc-tmp"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate()
    except BaseException:
        _stop_group(proc)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return proc.returncode, stderr


def _stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM to the process group, then SIGKILL if it is still there after a second."""
    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _compile_error(stderr: str, target: Target) -> BuildError:
    for line in stderr.splitlines():
        if "overflowed by" in line:
            detail = line.split(":")[-1].strip()
            return BuildError(
                f"firmware does not fit {target.board.name}: {detail}",
                hint="see `mcugen build` sizes; reduce the arena or the weights",
            )
    first = next((ln for ln in stderr.splitlines() if "error" in ln), stderr[-300:])
    return BuildError(
        f"compiling the generated project failed: {first.strip()}",
        hint="this is a bug in mcugen; please report it with the model",
    )


def build(gen: Generated, target: Target, out_dir: Path) -> BuildResult:
    """Write and compile in a staging directory, then move it to `out_dir` in one rename.

    A failure at any point leaves `out_dir` as it was (absent, or the previous build).
    """
    check_fits(gen, target)
    files = project_files(gen, target)
    with staged_directory(out_dir) as staging:
        write_tree(files, staging)
        seconds = compile_project(staging, target)
    out_dir = out_dir.resolve()
    exe = out_dir / executable_name(target)
    return BuildResult(out_dir, exe, seconds, tuple(sorted(files)))
