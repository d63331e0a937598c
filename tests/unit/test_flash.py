"""`mcugen flash`: tool choice, the command lines it runs, and its one-line errors. No probe, no
board and no flash tool are needed: tools are hidden or replaced by small fake scripts."""

from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path

import pytest

from mcugen import cli
from mcugen.boards import load_board
from mcugen.errors import McugenError
from mcugen.link import flash
from support import EXAMPLE

ELF = Path("/tmp/build/model.elf")


@pytest.fixture
def no_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither pyOCD nor any tool on PATH."""
    monkeypatch.setitem(sys.modules, "pyocd", None)  # `import pyocd` raises ImportError
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)


def test_no_tool_is_one_clear_line(no_tools: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["flash", str(EXAMPLE), "--board", "nucleo-f767"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "mcugen: error: no flash tool found: install pyocd (pip install pyocd), "
        "stlink-tools or openocd\n"
    )


def test_named_tool_missing(no_tools: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["flash", str(EXAMPLE), "--board", "nucleo-f767", "--probe", "pyocd"]) == 2
    assert "pyocd is not installed; pip install pyocd" in capsys.readouterr().err
    argv = ["flash", str(EXAMPLE), "--board", "nucleo-f767", "--probe", "openocd"]
    assert cli.main(argv) == 2
    assert "openocd is not installed" in capsys.readouterr().err


def test_emulator_boards_have_nothing_to_flash(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["flash", str(EXAMPLE), "--board", "mps2-an500"]) == 2
    assert "runs only as QEMU" in capsys.readouterr().err
    assert cli.main(["flash", str(EXAMPLE), "--board", "host"]) == 2


def test_command_lines() -> None:
    f767 = load_board("nucleo-f767")
    assert flash.flash_command("pyocd", f767, ELF) == [
        sys.executable,
        "-m",
        "pyocd",
        "flash",
        "--target",
        "stm32f767zi",
        "/tmp/build/model.elf",
    ]
    assert flash.flash_command("st-flash", f767, ELF) == [
        "st-flash",
        "--reset",
        "write",
        "/tmp/build/model.bin",
        "0x08000000",
    ]
    assert flash.objcopy_command(f767, ELF, ELF.with_suffix(".bin")) == [
        "arm-none-eabi-objcopy",
        "-O",
        "binary",
        "/tmp/build/model.elf",
        "/tmp/build/model.bin",
    ]
    assert flash.flash_command("openocd", f767, ELF) == [
        "openocd",
        "-f",
        "board/st_nucleo_f7.cfg",
        "-c",
        "program {/tmp/build/model.elf} verify reset exit",
    ]
    l4 = load_board("nucleo-l4r5zi")
    assert flash.flash_command("pyocd", l4, ELF)[5] == "stm32l4r5zitx"


def test_tool_order(monkeypatch: pytest.MonkeyPatch) -> None:
    f767 = load_board("nucleo-f767")
    installed = {"st-flash", "openocd"}
    monkeypatch.setattr(flash, "tool_available", lambda tool: tool in installed)
    assert flash.choose_tool(f767, None) == "st-flash"  # the board's own, before openocd
    installed.add("pyocd")
    assert flash.choose_tool(f767, None) == "pyocd"
    assert flash.choose_tool(f767, "openocd") == "openocd"
    installed.clear()
    with pytest.raises(McugenError, match="no flash tool found"):
        flash.choose_tool(f767, None)


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No pyOCD; on PATH, a folder for fake flash tools, the ARM toolchain and the system's."""
    monkeypatch.setitem(sys.modules, "pyocd", None)
    directory = tmp_path / "bin"
    directory.mkdir()
    gcc_dir = str(Path(shutil.which("arm-none-eabi-gcc") or "").parent)
    monkeypatch.setenv("PATH", f"{directory}:{gcc_dir}:/usr/bin:/bin")
    return directory


def _fake_tool(directory: Path, name: str, output: str, status: int) -> None:
    script = directory / name
    script.write_text(f"#!/bin/sh\ncat >&2 <<'END'\n{output}\nEND\nexit {status}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
def test_no_probe_found(tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real build for the board, then st-flash (a fake one here) finds no ST-LINK."""
    _fake_tool(bin_dir, "st-flash", "WARN usb.c: Couldn't find any ST-Link devices", 255)
    argv = ["flash", str(EXAMPLE), "--board", "nucleo-f767", "-o", str(tmp_path / "proj")]
    assert cli.main(argv) == 4
    err = capsys.readouterr().err
    assert err.startswith("mcugen: error: no probe found by st-flash for nucleo-f767;")
    assert err.count("\n") == 1
    assert (tmp_path / "proj" / "model.bin").stat().st_size > 1000  # objcopy ran


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
def test_flash_success_and_failure(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["flash", str(EXAMPLE), "--board", "nucleo-f767", "--probe", "openocd"]
    _fake_tool(bin_dir, "openocd", "** Programming Finished **", 0)
    assert cli.main(argv) == 0
    assert "flashed" in capsys.readouterr().out
    _fake_tool(bin_dir, "openocd", "Error: checksum mismatch", 1)
    assert cli.main(argv) == 4
    assert "openocd failed with status 1: Error: checksum mismatch" in capsys.readouterr().err
