"""The real `mcugen` with stderr on a terminal (a pseudo-terminal): a progress line there, the same
stdout as through a pipe, and nothing with --quiet (issue 31, item 13)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from support import EXAMPLE

MCUGEN = Path(sys.executable).with_name("mcugen")


def mcugen(*args: str | Path, terminal: bool) -> tuple[bytes, bytes]:
    """(stdout, stderr) of `mcugen args`, stderr on a pseudo-terminal or a pipe; the progress
    line shows at once (MCUGEN_PROGRESS_DELAY=0) so that a short wait shows it too."""
    env = {**os.environ, "MCUGEN_PROGRESS_DELAY": "0"}
    if not terminal:
        done = subprocess.run([MCUGEN, *args], capture_output=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr
    leader, follower = pty.openpty()
    proc = subprocess.Popen([MCUGEN, *args], stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    stderr = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        stderr += chunk
    os.close(leader)
    assert proc.stdout is not None
    stdout = proc.stdout.read()
    assert proc.wait(timeout=300) == 0, stderr
    return stdout, stderr


def test_build_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    out = tmp_path / "project"
    build = ("build", EXAMPLE, "--board", "host", "-o", out)
    on_terminal, progress = mcugen(*build, terminal=True)
    assert re.search(rb"\rmcugen: compiling for host \(\d+ s\)\x1b\[K", progress), progress
    assert progress.endswith(b"\r\x1b[K")  # erased when the build ended
    piped, nothing = mcugen(*build, terminal=False)
    assert nothing == b""

    def timeless(stdout: bytes) -> bytes:
        return re.sub(rb"in \d+\.\d+ s", b"in S s", stdout)

    assert timeless(on_terminal) == timeless(piped)
    quiet, none = mcugen(*build, "--quiet", terminal=True)
    assert none == b"" and timeless(quiet) == timeless(piped)


def test_plan_json_is_the_same_on_a_terminal() -> None:
    on_terminal, _ = mcugen("plan", EXAMPLE, "--json", terminal=True)
    piped, nothing = mcugen("plan", EXAMPLE, "--json", terminal=False)
    assert on_terminal == piped and nothing == b""
