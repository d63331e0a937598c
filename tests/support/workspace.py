"""The real `mcugen` binary run as a user runs it (tests/cli/test_untrusted_*): a working folder
with a user's file, a private TMPDIR and HOME, and snapshots of them before and after."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from support.paths import EXAMPLE

MCUGEN = Path(sys.executable).with_name("mcugen")


def snapshot(root: Path) -> dict[str, tuple[int, str]]:
    """Every path under `root` with its mode and the SHA-256 of a file's bytes."""
    result = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = ""
        if stat.S_ISREG(st.st_mode):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        result[path.relative_to(root).as_posix()] = (st.st_mode, digest)
    return result


class Workspace:
    """A working folder (with a user's file), a private TMPDIR and HOME, and the model."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cwd = root / "work"
        self.tmp = root / "tmp"
        self.home = root / "home"
        for folder in (self.cwd, self.tmp, self.home):
            folder.mkdir(parents=True)
        (self.cwd / "notes.txt").write_text("the user's notes\n")
        self.model = self.cwd / "model.tflite"
        shutil.copy(EXAMPLE, self.model)

    def env(self, **extra: str) -> dict[str, str]:
        env = {**os.environ, "TMPDIR": str(self.tmp), "HOME": str(self.home)}
        env["MPLCONFIGDIR"] = str(self.root / "matplotlib")  # its font cache, not an output
        env.update(extra)
        env.pop("MCUGEN_DEBUG", None)
        return env

    def run(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
        proc = subprocess.run(
            [str(MCUGEN), *args],
            cwd=cwd or self.cwd,
            env=env or self.env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def state(self) -> tuple[dict[str, tuple[int, str]], ...]:
        return snapshot(self.cwd), snapshot(self.tmp), snapshot(self.home)


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def one_error_line(self, code: int = 2) -> str:
        lines = self.err.strip().splitlines()
        assert self.code == code, (self.code, self.out, self.err)
        assert len(lines) == 1 and lines[0].startswith("mcugen: error: "), self.err
        assert "Traceback" not in self.err and "internal error" not in self.err
        return lines[0]
