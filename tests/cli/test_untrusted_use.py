"""The real `mcugen` binary used as a first-time user uses it, mistakes included (issue 31): outputs
over a user's files, the working folder, its parents, the home folder and `/`; read-only
folders; Ctrl-C while the solver runs, after it ran, during compilation and during a QEMU run.
Each case checks the exit code, that the error is one line, and that nothing outside the output
changed (a snapshot of the working folder and of TMPDIR before and after). Inputs of another
type or layout and the error lines: test_untrusted_inputs.py."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mcugen.model.tflite_write import write_model
from support import MCUGEN, Result, Workspace
from testgraphs import randwire

#: Seconds an interrupted command may take to stop (the issue asks for one; CI machines are
#: loaded with other tests).
STOP_SECONDS = 1.5


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


# --- Outputs over what the user owns ------------------------------------------------------------

FOLDER_COMMANDS = {
    "build": ["build", "model.tflite", "--board", "host"],
    "export": ["export", "model.tflite"],
    "flash": ["flash", "model.tflite", "--board", "nucleo-f767"],  # refused before any probe
}


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
def test_a_folder_of_the_users_is_never_an_output(ws: Workspace, command: str) -> None:
    mine = ws.cwd / "mine"
    mine.mkdir()
    (mine / "keep.c").write_text("int keep;\n")
    before = ws.state()
    line = ws.run(*FOLDER_COMMANDS[command], "-o", "mine").one_error_line()
    assert "mine: the output directory holds files mcugen did not write: keep.c" in line
    assert ws.state() == before


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
@pytest.mark.parametrize("where", [".", "..", "~", "/"])
def test_the_working_folder_its_parents_home_and_root_are_refused(
    ws: Workspace, command: str, where: str
) -> None:
    inner = ws.cwd / "inner"
    inner.mkdir()
    shutil.copy(ws.model, inner / "model.tflite")
    out = str(ws.home) if where == "~" else where
    before = ws.state()
    line = ws.run(*FOLDER_COMMANDS[command], "-o", out, cwd=inner).one_error_line()
    assert "refusing to write the output over" in line, line
    assert ws.state() == before


def test_an_earlier_output_is_replaced_but_not_once_the_user_changed_it(ws: Workspace) -> None:
    for _ in range(2):
        assert ws.run(*FOLDER_COMMANDS["build"], "-o", "out").code == 0
    assert (ws.cwd / "out" / ".mcugen-outputs").is_file()
    assert not [p for p in ws.cwd.iterdir() if p.name.startswith(".out")]  # nothing left aside
    (ws.cwd / "out" / "main.c").write_text("/* my edit */\n")
    before = ws.state()
    line = ws.run(*FOLDER_COMMANDS["build"], "-o", "out").one_error_line()
    assert "main.c (changed since mcugen wrote it)" in line
    (ws.cwd / "out" / "main.c").unlink()
    (ws.cwd / "out" / "extra").mkdir()
    assert "extra/" in ws.run(*FOLDER_COMMANDS["build"], "-o", "out").one_error_line()
    (ws.cwd / "out" / "extra").rmdir()
    assert ws.state() != before  # the test's own edits only
    assert (ws.cwd / "out" / "model").is_file()


def _file_commands(ws: Workspace, path: str) -> dict[str, list[str]]:
    """Every command that writes one file, with that file at `path`."""
    data = ws.cwd / "data.npz"
    if not data.exists():
        rng = np.random.default_rng(0)
        np.savez(data, x=rng.integers(-128, 128, (4, 8, 8, 1), dtype=np.int8), y=np.arange(4) % 4)
    return {
        "run --output": ["run", "model.tflite", "--output", path],
        "optimize -o": ["optimize", "model.tflite", "-o", path],
        "report -o": ["report", "model.tflite", "--board", "nucleo-f767", "--no-run", "-o", path],
        "report --json": [
            "report",
            "model.tflite",
            "--board",
            "nucleo-f767",
            "--no-run",
            "-o",
            "r.html",
            "--json",
            path,
        ],  # fmt: skip
        "plan --chart": ["plan", "model.tflite", "--chart", path],
        "train -o": ["train", "model.tflite", "--data", "data.npz", "-o", path],
        "measure --save-trace": [
            "measure",
            "model.tflite",
            "--board",
            "nucleo-f767",
            "--port",
            "/dev/null",
            "--power",
            "ppk2:/dev/null",
            "--save-trace",
            path,
        ],  # fmt: skip
    }


FILE_COMMANDS = [
    "run --output",
    "optimize -o",
    "report -o",
    "report --json",
    "plan --chart",
    "train -o",
    "measure --save-trace",
]


@pytest.mark.parametrize("command", FILE_COMMANDS)
def test_a_file_of_the_users_is_never_overwritten(ws: Workspace, command: str) -> None:
    args = _file_commands(ws, "notes.txt")[command]
    before = ws.state()
    line = ws.run(*args).one_error_line()
    assert "notes.txt: the file exists and mcugen did not write it" in line
    assert ws.state() == before
    # the input model itself is a user's file too
    args = _file_commands(ws, "model.tflite")[command]
    assert "model.tflite: the file exists" in ws.run(*args).one_error_line()
    assert ws.state() == before


def test_an_earlier_output_file_is_replaced(ws: Workspace) -> None:
    for _ in range(2):
        assert ws.run("run", "model.tflite", "--output", "y.npy").code == 0, "second run"
    assert np.load(ws.cwd / "y.npy").size > 0
    with open(ws.cwd / "y.npy", "ab") as f:
        f.write(b"\0")  # changed since: no longer mcugen's
    assert "y.npy: the file exists" in ws.run("run", "model.tflite", "--output", "y.npy").err


def test_two_outputs_on_one_path_are_refused(ws: Workspace) -> None:
    args = _file_commands(ws, "r.html")["report --json"]
    line = ws.run(*args).one_error_line()
    assert "--output and --json name the same file" in line


# --- Outputs that cannot be written -------------------------------------------------------------


def _read_only_folder(ws: Workspace) -> tuple[Path, dict[str, object]]:
    """A folder this user cannot write in, and how to run mcugen as that user: as root (CI) the
    command runs as `nobody` in a folder root owns; otherwise the folder is made read-only."""
    if os.geteuid() != 0:
        folder = ws.cwd / "locked"
        folder.mkdir()
        folder.chmod(0o555)
        return folder, {}
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is needed to run as another user")
    base = Path(tempfile.mkdtemp(prefix="mcugen-ro-"))
    base.chmod(0o755)
    folder = base / "locked"
    folder.mkdir()
    folder.chmod(0o755)
    shutil.copy(ws.model, base / "model.tflite")
    (base / "model.tflite").chmod(0o644)
    np.savez(base / "data.npz", **np.load(ws.cwd / "data.npz"))
    (base / "data.npz").chmod(0o644)
    return folder, {
        "prefix": ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
        "cwd": base,
    }


@pytest.mark.parametrize(
    "command",
    ["build", "export", "run --output", "optimize -o", "report -o", "train -o", "plan --chart"]
    + ["flash"],
)
def test_an_unwritable_output_is_one_line_naming_path_and_reason(
    ws: Workspace, command: str
) -> None:
    _file_commands(ws, "x")  # writes data.npz
    folder, how = _read_only_folder(ws)
    out = str(folder / ("project" if command in FOLDER_COMMANDS else "out.bin"))
    args = FOLDER_COMMANDS[command] + ["-o", out] if command in FOLDER_COMMANDS else None
    args = args or _file_commands(ws, out)[command]
    cwd = Path(str(how.get("cwd", ws.cwd)))
    prefix = list(how.get("prefix", []))  # type: ignore[call-overload]
    env = ws.env(HOME=str(cwd))
    start = time.monotonic()
    proc = subprocess.run(
        [*prefix, str(MCUGEN), *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    line = Result(proc.returncode, proc.stdout, proc.stderr).one_error_line()
    assert out in line and "Permission denied" in line, line
    assert time.monotonic() - start < 20  # refused before any long work
    assert list(folder.iterdir()) == []
    if how:
        shutil.rmtree(cwd)


# --- Ctrl-C --------------------------------------------------------------------------------------


def _interrupt(
    ws: Workspace,
    args: Sequence[str],
    *,
    delay: float = 0.0,
    marker: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[Result, float]:
    """Start mcugen, send SIGINT after `delay` seconds or once `marker` exists; the result and
    the seconds it took to stop. The child gets SIGINT's default action back: a suite started as
    a background job (`cmd &` in a script) inherits SIGINT ignored, as a user's terminal never
    hands it to mcugen."""
    proc = subprocess.Popen(
        [str(MCUGEN), *args],
        cwd=ws.cwd,
        env=env or ws.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    if marker is not None:
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the marker never appeared"
            time.sleep(0.02)
    time.sleep(delay)
    assert proc.poll() is None, "finished before the interrupt: " + proc.communicate()[1]
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    return Result(proc.returncode, out, err), time.monotonic() - sent


def _check_interrupted(ws: Workspace, result: Result, seconds: float, before: tuple) -> None:
    assert result.code == 130, (result.code, result.err)
    assert result.err.strip().splitlines() == ["mcugen: interrupted; no partial output is left"]
    assert seconds < STOP_SECONDS, seconds
    assert ws.state() == before, "files were left behind or changed"


@pytest.fixture
def big_graph(ws: Workspace) -> Path:
    """A 120-operator irregular graph whose CP-SAT layout takes seconds."""
    path = ws.cwd / "rw.tflite"
    path.write_bytes(write_model(randwire(3, nodes=40, channels=8, hw=16)))
    return path


@pytest.mark.parametrize("delay", [1.0, 3.0])
def test_ctrl_c_while_the_solver_runs(ws: Workspace, big_graph: Path, delay: float) -> None:
    before = ws.state()
    args = ["plan", big_graph.name, "--layout", "cpsat", "--time-budget", "20", "--chart", "c.svg"]
    result, seconds = _interrupt(ws, args, delay=delay)
    _check_interrupted(ws, result, seconds, before)


def _launcher(ws: Workspace, name: str, body: str) -> Path:
    script = ws.root / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


def test_ctrl_c_during_compilation_after_the_solver_ran(ws: Workspace) -> None:
    """CP-SAT lays the arena out, then the compiler (a launcher that marks its start and waits)
    is interrupted: the previous build stays whole, no compiler file is left in TMPDIR."""
    args = ["build", "model.tflite", "--board", "host", "--layout", "cpsat", "-o", "out"]
    assert ws.run(*args).code == 0
    before = ws.state()
    marker = ws.root / "compiling"
    slow = _launcher(ws, "slowcc", f'touch "{marker}"\nsleep 30\nexec "$@"\n')
    env = ws.env(MCUGEN_CC_LAUNCHER=str(slow))
    result, seconds = _interrupt(ws, args, marker=marker, delay=0.2, env=env)
    _check_interrupted(ws, result, seconds, before)


def test_ctrl_c_during_a_qemu_run(ws: Workspace) -> None:
    """A stand-in qemu-system-arm marks its start and runs the real one: interrupted, QEMU is
    stopped and no output file is written."""
    real = shutil.which("qemu-system-arm")
    if real is None:
        pytest.skip("qemu-system-arm is not installed")
    marker = ws.root / "qemu-started"
    bin_dir = ws.root / "bin"
    bin_dir.mkdir()
    _launcher(
        ws, "bin/qemu-system-arm", f'touch "{marker}"\necho $$ > "{marker}"\nexec {real} "$@"\n'
    )
    env = ws.env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    before = ws.state()
    args = ["run", "model.tflite", "--board", "nucleo-f767", "--emulate", "--output", "y.npy"]
    result, seconds = _interrupt(ws, args, marker=marker, delay=0.3, env=env)
    _check_interrupted(ws, result, seconds, before)
    pid = int(marker.read_text())
    assert not _alive(pid), "QEMU still runs"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"
