"""Writing firmware to a real board through its debug probe (`mcugen flash`): which tool, its
command line, and its failures as one-line errors.

Tools, in the order tried when none is named: pyOCD (the optional extra `mcugen[flash]`, run as
`python -m pyocd`), the board's own `flash_tool` from board.toml, then `st-flash` (stlink-tools)
and `openocd` from PATH. Each needs something from board.toml: pyOCD its `probe_target`, st-flash
an STM32 (a raw .bin written at the flash origin), openocd its `openocd_config`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from mcugen.boards import Board
from mcugen.errors import BuildError, McugenError, RunError

TOOLS = ("pyocd", "st-flash", "openocd")
NO_TOOL = "no flash tool found: install pyocd (pip install pyocd), stlink-tools or openocd"
#: What each tool prints when no probe is attached (compared in lower case).
NO_PROBE_PHRASES = (
    "no connected debug probes",
    "no available debug probes",
    "couldn't find any st-link",
    "found 0 stlink",
    "no st-link",
    "open failed",
    "unable to find a matching cmsis-dap device",
    "no device found",
    "no j-link device found",
)
FLASH_TIMEOUT_S = 300


def pyocd_installed() -> bool:
    try:
        import pyocd  # noqa: F401
    except ImportError:
        return False
    return True


def tool_available(tool: str) -> bool:
    return pyocd_installed() if tool == "pyocd" else shutil.which(tool) is not None


def unsupported_reason(tool: str, board: Board) -> str:
    """Why `tool` cannot flash `board` from what board.toml says; "" when it can."""
    probe_target = str(board.extra.get("probe_target", ""))
    if tool == "pyocd" and not probe_target:
        return "board.toml has no probe_target for pyOCD"
    if tool == "st-flash" and not probe_target.startswith("stm32"):
        return "st-flash writes STM32 parts only"
    if tool == "openocd" and not board.extra.get("openocd_config"):
        return "board.toml has no openocd_config"
    return ""


def choose_tool(board: Board, requested: str | None) -> str:
    """The named tool (checked), or the first of pyOCD, the board's own tool, st-flash, openocd
    that is installed and can flash this board."""
    if requested:
        reason = unsupported_reason(requested, board)
        if reason:
            raise McugenError(f"{requested} cannot flash {board.name}: {reason}")
        if not tool_available(requested):
            hint = "pip install pyocd" if requested == "pyocd" else f"put {requested} on PATH"
            raise McugenError(f"{requested} is not installed", hint=hint)
        return requested
    candidates = dict.fromkeys(t for t in ("pyocd", board.flash_tool, *TOOLS) if t in TOOLS)
    usable = [t for t in candidates if not unsupported_reason(t, board)]
    if not usable:
        raise McugenError(
            f"mcugen does not know how to flash {board.name}",
            where=f"{board.directory / 'board.toml'}",
            hint="add probe_target (pyOCD) or openocd_config to it",
        )
    for tool in usable:
        if tool_available(tool):
            return tool
    raise McugenError(NO_TOOL)


def objcopy_command(board: Board, elf: Path, binary: Path) -> list[str]:
    """ELF to a raw image starting at the flash origin (what st-flash writes)."""
    objcopy = board.cc[: -len("gcc")] + "objcopy" if board.cc.endswith("gcc") else "objcopy"
    return [objcopy, "-O", "binary", str(elf), str(binary)]


def flash_command(tool: str, board: Board, elf: Path) -> list[str]:
    """The command that writes `elf` (or, for st-flash, the .bin beside it) to the board and
    resets it."""
    if tool == "pyocd":
        target = str(board.extra["probe_target"])
        return [sys.executable, "-m", "pyocd", "flash", "--target", target, str(elf)]
    if tool == "st-flash":
        assert board.flash is not None
        binary = elf.with_suffix(".bin")
        return ["st-flash", "--reset", "write", str(binary), f"0x{board.flash.origin:08x}"]
    if tool == "openocd":
        config = str(board.extra["openocd_config"])
        return ["openocd", "-f", config, "-c", f"program {{{elf.as_posix()}}} verify reset exit"]
    raise ValueError(f"unknown flash tool {tool!r}")


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=FLASH_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise RunError(f"{what} did not finish within {FLASH_TIMEOUT_S} s") from None
    except OSError as exc:
        raise RunError(f"cannot run {cmd[0]} ({exc})") from None


def write_firmware(tool: str, board: Board, elf: Path) -> None:
    """Flash `elf` with `tool`; one-line errors for a missing probe or a failed write."""
    if tool == "st-flash":
        proc = _run(objcopy_command(board, elf, elf.with_suffix(".bin")), "objcopy")
        if proc.returncode != 0:
            raise BuildError(f"objcopy failed: {proc.stderr.strip()[:200]}")
    proc = _run(flash_command(tool, board, elf), tool)
    if proc.returncode == 0:
        return
    output = f"{proc.stdout}\n{proc.stderr}"
    if any(phrase in output.lower() for phrase in NO_PROBE_PHRASES):
        raise RunError(
            f"no probe found by {tool} for {board.name}",
            hint="connect the board's ST-LINK USB port; check the cable and udev permissions",
        )
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    raise RunError(
        f"{tool} failed with status {proc.returncode}: {lines[-1] if lines else 'no message'}",
        where=f"board {board.name}",
    )
