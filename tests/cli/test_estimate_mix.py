"""`--estimate mix` of `run` and `measure` (mcugen/commands/_estimate_mix.py): what it cannot do is
one error line: before any firmware is built, without the twin, on a core without a cycle model,
with --mlperf, and without a host C compiler to build the QEMU plugin; after it, a plugin QEMU
refuses (QEMU's own line). The estimates themselves are checked on the twins
(tests/qemu/test_instruction_mix.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcugen.cli import main
from support import EXAMPLE, NEEDS_TWIN


def error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_the_mix_needs_the_twin(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(EXAMPLE), "--board", "nucleo-f767", "--port", "/dev/null"]
    line = error_line(capsys, [*argv, "--estimate", "mix"])
    assert "--estimate mix counts the instructions executed on the board's QEMU twin" in line
    assert "add --emulate" in line


def test_a_core_without_a_cycle_model_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(EXAMPLE), "--board", "mps3-an547", "--emulate", "--estimate", "mix"]
    line = error_line(capsys, argv)
    assert "no instruction-mix cycle model for cortex-m55" in line and "cortex-m7" in line


def test_measure_takes_the_mix_only_when_profiling(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["measure", str(EXAMPLE), "--board", "nucleo-l4r5zi", "--emulate", "--mlperf"]
    line = error_line(capsys, [*argv, "--estimate", "mix"])
    assert "--estimate mix applies to profiling runs" in line


@pytest.mark.parametrize("command", ["run", "measure"])
def test_no_host_compiler_is_one_line(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no plugin built before
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    argv = [command, str(EXAMPLE), "--board", "nucleo-l4r5zi", "--emulate", "--estimate", "mix"]
    line = error_line(capsys, argv)
    assert "the QEMU instruction-mix plugin needs a host C compiler" in line
    assert "no-such-cc not found" in line and "scripts/install.sh" in line


def test_a_compiler_that_fails_gives_its_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = tmp_path / "cc"
    failing.write_text("#!/bin/sh\necho 'fatal error: qemu-plugin.h: No such file' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", str(failing))
    argv = ["run", str(EXAMPLE), "--board", "nucleo-f767", "--emulate", "--estimate", "mix"]
    line = error_line(capsys, argv)
    assert "building the QEMU instruction-mix plugin failed: fatal error: qemu-plugin.h" in line


@NEEDS_TWIN
def test_a_plugin_qemu_refuses_gives_qemu_s_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import mcugen.link.instruction_mix as instruction_mix

    broken = tmp_path / "mix.so"
    broken.write_text("not a shared object")
    monkeypatch.setattr(instruction_mix, "plugin_path", lambda: broken)
    argv = ["run", str(EXAMPLE), "--board", "nucleo-l4r5zi", "--emulate", "--estimate", "mix"]
    line = error_line(capsys, argv)
    assert "QEMU exited with status" in line and "Could not load plugin" in line
