"""Run firmware on a QEMU machine with its console on a local TCP socket.

The process is always reaped: on normal exit, on an exception, on Ctrl-C, and (through `atexit`)
when the interpreter ends. Instruction counts are deterministic with `-icount shift=0`.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import serial

from mcugen.errors import RunError

_LIVE: set[subprocess.Popen[bytes]] = set()


def _reap_all() -> None:
    for proc in list(_LIVE):
        _stop(proc)


atexit.register(_reap_all)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    _LIVE.discard(proc)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def qemu_command(machine: str, elf: Path, port: int) -> list[str]:
    return [
        "qemu-system-arm",
        "-M",
        machine,
        "-nographic",
        "-monitor",
        "none",
        "-serial",
        f"tcp:127.0.0.1:{port},server=on,wait=on",
        "-semihosting-config",
        "enable=on,target=native",
        "-icount",
        "shift=0,sleep=off",
        "-kernel",
        str(elf),
    ]


@contextlib.contextmanager
def qemu_console(machine: str, elf: Path, *, timeout: float = 10.0) -> Iterator[serial.SerialBase]:
    """Start QEMU, connect to its console; yields a pyserial object. QEMU is killed on exit."""
    if shutil.which("qemu-system-arm") is None:
        raise RunError(
            "qemu-system-arm not found",
            hint="run scripts/install.sh (or apt-get install qemu-system-arm)",
        )
    port = _free_port()
    proc = subprocess.Popen(
        qemu_command(machine, elf, port),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _LIVE.add(proc)
    try:
        link = _connect(proc, port, timeout)
        try:
            yield link
        finally:
            link.close()
    finally:
        _stop(proc)


def _connect(proc: subprocess.Popen[bytes], port: int, timeout: float) -> serial.SerialBase:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
            raise RunError(
                f"QEMU exited with status {proc.returncode} before the console "
                f"opened: {err.splitlines()[-1] if err else 'no message'}"
            )
        try:
            return serial.serial_for_url(f"socket://127.0.0.1:{port}", timeout=1.0)
        except serial.SerialException:
            if time.monotonic() > deadline:
                raise RunError(
                    f"could not connect to QEMU's console on port {port} within {timeout:.0f} s"
                ) from None
            time.sleep(0.05)
