"""Run firmware on a QEMU machine with its console on a local TCP socket.

The process is always reaped: on normal exit, on an exception, on Ctrl-C, and (through `atexit`)
when the interpreter ends. On Linux QEMU also gets SIGKILL when the thread that started it dies,
even by SIGKILL, so a killed test run leaves no emulator behind. Instruction counts are
deterministic with `-icount shift=0`. The console socket has Nagle's algorithm off (`nodelay`):
with it on, every request waited some 40 ms for the host's delayed ACK.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import serial

from mcugen.errors import RunError

_LIVE: set[subprocess.Popen[bytes]] = set()


def _reap_all() -> None:
    for proc in list(_LIVE):
        _stop(proc)


atexit.register(_reap_all)


def _stop(proc: subprocess.Popen[bytes], *, graceful: bool = False) -> None:
    """Kill QEMU; `graceful`: ask it to exit first (SIGTERM), so that its plugins' exit callbacks
    run, and kill it only if it has not exited within 5 s."""
    if graceful and proc.poll() is None:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    _LIVE.discard(proc)


_PR_SET_PDEATHSIG = 1


_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None


def _die_with_parent() -> None:  # runs in the child, between fork and exec
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def listening_socket() -> socket.socket:
    """A TCP socket on a free local port, already listening, for QEMU to inherit (`fd=`).

    Binding here rather than asking QEMU to bind a port picked earlier closes a race: two
    emulators started at once could be given the same free port, and one host would then talk
    to the other's guest (seen in CI as a boot banner that never came).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    return sock


def qemu_command(
    machine: str,
    elf: Path,
    listen_fd: int,
    extra: Sequence[str] = (),
    serial_fds: Sequence[int] = (),
) -> list[str]:
    """QEMU's command line with the console on the inherited listening socket `listen_fd`, and
    the machine's next UARTs on `serial_fds` (listening too; QEMU does not wait for a client:
    board-to-board links, link/links.py); `extra` options go before the firmware (e.g.
    `-trace` events and `-D` for their log)."""
    serials = [
        arg
        for k, fd in enumerate(serial_fds)
        for arg in (
            "-chardev",
            f"socket,id=serial{k + 1},fd={fd},server=on,wait=off,nodelay=on",
            "-serial",
            f"chardev:serial{k + 1}",
        )
    ]
    return [
        "qemu-system-arm",
        "-M",
        machine,
        "-nographic",
        "-monitor",
        "none",
        "-chardev",
        f"socket,id=console,fd={listen_fd},server=on,wait=on,nodelay=on",
        "-serial",
        "chardev:console",
        *serials,
        "-semihosting-config",
        "enable=on,target=native",
        "-icount",
        "shift=0,sleep=off",
        *extra,
        "-kernel",
        str(Path(elf).resolve()),
    ]


@contextlib.contextmanager
def qemu_console(
    machine: str,
    elf: Path,
    *,
    timeout: float = 10.0,
    cwd: Path | None = None,
    extra: Sequence[str] = (),
    serials: Sequence[socket.socket] = (),
    graceful: bool = False,
) -> Iterator[serial.SerialBase]:
    """Start QEMU, connect to its console; yields a pyserial object. QEMU is killed on exit
    (asked to exit first when `graceful`, so that a `-plugin` writes its results).
    `cwd`: QEMU's working directory, where the firmware's semihosting files go (checkpoints).
    `extra`: more QEMU options (`qemu_command`); `serials`: listening sockets for the UARTs
    after the console, which QEMU inherits (the caller closes them)."""
    if shutil.which("qemu-system-arm") is None:
        raise RunError(
            "qemu-system-arm not found",
            hint="run scripts/install.sh (or apt-get install qemu-system-arm)",
        )
    with listening_socket() as listener:
        port = int(listener.getsockname()[1])
        proc = subprocess.Popen(
            qemu_command(machine, elf, listener.fileno(), extra, [s.fileno() for s in serials]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(listener.fileno(), *(s.fileno() for s in serials)),
            preexec_fn=_die_with_parent,
            cwd=cwd,
        )
    _LIVE.add(proc)
    try:
        link = _connect(proc, port, timeout)
        try:
            yield link
        except (RunError, serial.SerialException):
            # The socket was listening before QEMU ran, so a QEMU that failed to start (or that
            # refused a -plugin) shows up only as a dead link: say why it died instead.
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1)
            if proc.returncode is not None:
                raise _exited(proc) from None
            raise
        finally:
            link.close()
    finally:
        _stop(proc, graceful=graceful)


def _exited(proc: subprocess.Popen[bytes]) -> RunError:
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    lines = [line for line in err.splitlines() if "waiting for connection" not in line]
    return RunError(
        f"QEMU exited with status {proc.returncode}: {lines[-1] if lines else 'no message'}"
    )


def _connect(proc: subprocess.Popen[bytes], port: int, timeout: float) -> serial.SerialBase:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise _exited(proc)
        try:
            return serial.serial_for_url(f"socket://127.0.0.1:{port}", timeout=1.0)
        except serial.SerialException:
            if time.monotonic() > deadline:
                raise RunError(
                    f"could not connect to QEMU's console on port {port} within {timeout:.0f} s"
                ) from None
            time.sleep(0.05)
