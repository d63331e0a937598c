"""MCUGEN_CC_LAUNCHER: every compile and the link go through the launcher (a compiler cache such
as ccache), the binary is the same bytes as without it, and a launcher that is not installed gets
one error line naming the variable, with no output left behind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mcugen.cli import main
from support import EXAMPLE

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


def test_every_compile_goes_through_the_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "calls.log"
    launcher = tmp_path / "launch"
    launcher.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec "$@"\n')
    launcher.chmod(0o755)
    monkeypatch.delenv("MCUGEN_CC_LAUNCHER", raising=False)
    assert main(["build", str(EXAMPLE), "--board", "host", "-o", str(tmp_path / "plain")]) == 0
    monkeypatch.setenv("MCUGEN_CC_LAUNCHER", str(launcher))
    assert main(["build", str(EXAMPLE), "--board", "host", "-o", str(tmp_path / "cached")]) == 0
    capsys.readouterr()
    calls = log.read_text().splitlines()
    objects = sorted(p.name for p in (tmp_path / "cached").rglob("*.o"))
    compiled = sorted(Path(c.split(" -o ")[1].split()[0]).name for c in calls if " -c " in c)
    assert objects and compiled == objects
    assert len(calls) == len(objects) + 1  # and the link
    binaries = [p for p in (tmp_path / "plain").iterdir() if p.is_file() and p.stat().st_mode & 1]
    assert len(binaries) == 1
    again = tmp_path / "cached" / binaries[0].name
    assert again.read_bytes() == binaries[0].read_bytes()


def test_a_missing_launcher_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MCUGEN_CC_LAUNCHER", "no-such-ccache")
    out = tmp_path / "fw"
    assert main(["build", str(EXAMPLE), "--board", "host", "-o", str(out)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "no-such-ccache" in err[0] and "MCUGEN_CC_LAUNCHER" in err[0]
    assert not out.exists() and not list(tmp_path.iterdir())
