"""QEMU is always reaped: after an exception or a Ctrl-C inside `qemu_console`, while it connects,
when `mcugen run --emulate` is interrupted, and even when the Python process that started it is
killed with SIGKILL. And `mcugen run --port` on a bad port is one clear line and a non-zero exit."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import serial

from mcugen import cli
from mcugen.boards import load_board, resolve_target
from mcugen.errors import RunError
from mcugen.firmware.compile import build
from mcugen.link import protocol, qemu
from mcugen.link.qemu import qemu_console
from mcugen.pipeline import generate_from_file
from support import EXAMPLE, NEEDS_TWIN, ROOT

pytestmark = NEEDS_TWIN
BOARD = "nucleo-f767"


def running(pid: int) -> bool:
    """Whether `pid` is a qemu-system-arm that has not exited (a zombie has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    comm, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2]
    return comm.startswith("qemu-system") and state not in "ZX"


def qemu_children() -> set[int]:
    """Children of this process named qemu-system-*, zombies included."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if "(qemu-system" in stat and int(fields[1]) == os.getpid():
                found.add(int(entry.name))
    return found


def live_pids() -> set[int]:
    return {proc.pid for proc in qemu._LIVE}


@pytest.fixture(scope="module")
def elf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = resolve_target(load_board(BOARD), emulate=True)
    gen = generate_from_file(EXAMPLE)
    return build(gen, target, tmp_path_factory.mktemp("reaping") / "fw").executable


MACHINE = resolve_target(load_board(BOARD), emulate=True).machine


@pytest.mark.parametrize("error", [RuntimeError("test failure"), KeyboardInterrupt()])
def test_error_inside_the_console_reaps_qemu(elf: Path, error: BaseException) -> None:
    before = qemu_children()
    with pytest.raises(type(error)), qemu_console(MACHINE, elf) as ser:
        link = protocol.DeviceLink(ser, name="QEMU")
        assert link.info().input_bytes == (3072,)
        (pid,) = live_pids()
        assert running(pid)
        raise error
    assert not running(pid) and not live_pids()
    assert qemu_children() == before  # not even a zombie left


def test_interrupt_while_connecting_reaps_qemu(elf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []

    def interrupted(url: str, **kwargs: object) -> serial.SerialBase:
        started.extend(live_pids())
        raise KeyboardInterrupt

    monkeypatch.setattr(qemu.serial, "serial_for_url", interrupted)
    with pytest.raises(KeyboardInterrupt), qemu_console(MACHINE, elf):
        pass
    (pid,) = started
    assert not running(pid) and not live_pids()


def test_qemu_that_cannot_start_says_why(elf: Path) -> None:
    """The console socket listens before QEMU runs, so connecting succeeds even when QEMU then
    fails: the error is still QEMU's own reason, and nothing is left running."""
    with pytest.raises(RunError, match=r"QEMU exited with status 1: .*-machine help"):
        with qemu_console("no-such-machine", elf) as ser:
            protocol.DeviceLink(ser, name="QEMU").info()
    assert not live_pids()


def test_consoles_started_together_each_reach_their_own_guest(elf: Path) -> None:
    """Eight emulators at once, each on the socket it inherited: every host sees one boot."""
    with contextlib.ExitStack() as stack:
        sers = [stack.enter_context(qemu_console(MACHINE, elf)) for _ in range(8)]
        infos = [protocol.DeviceLink(ser, name="QEMU").info() for ser in sers]
    assert [info.input_bytes for info in infos] == [(3072,)] * 8
    assert not live_pids()


def test_interrupted_cli_run_reaps_qemu(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mcugen run --emulate` and Ctrl-C during the exchange: exit 130, QEMU gone."""
    seen: list[int] = []

    def interrupted(link: protocol.DeviceLink) -> protocol.DeviceInfo:
        seen.extend(pid for pid in live_pids() if running(pid))
        raise KeyboardInterrupt

    monkeypatch.setattr(protocol.DeviceLink, "info", interrupted)
    code = cli.main(["run", str(EXAMPLE), "--board", BOARD, "--emulate"])
    assert code == 130
    assert capsys.readouterr().err.strip() == "mcugen: interrupted; no partial output is left"
    assert len(seen) == 1 and not running(seen[0]) and not live_pids()


def test_killed_python_takes_qemu_along(elf: Path) -> None:
    """SIGKILL leaves no atexit or finally to run: QEMU dies by its parent-death signal."""
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from mcugen.link import qemu
        with qemu.qemu_console({MACHINE!r}, Path({str(elf)!r})):
            print(next(iter(qemu._LIVE)).pid, flush=True)
            time.sleep(60)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env)
    pid = 0
    try:
        assert child.stdout is not None
        pid = int(child.stdout.readline())
        assert running(pid)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        deadline = time.monotonic() + 10
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(pid)
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
        if pid and running(pid):  # the test failed: do not leave the emulator behind
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("port", ["loop://", "/dev/ttyMCUGEN-NONE0", "socket://127.0.0.1:1"])
def test_cli_run_on_a_bad_port_is_one_clear_line(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    start = time.monotonic()
    code = cli.main(["run", str(EXAMPLE), "--board", BOARD, "--port", port])
    # A device path that does not exist is refused before building (bad input, exit 2); a port
    # that exists but does not answer fails when run (exit 4).
    assert code == (2 if port.startswith("/dev/") else 4)
    assert time.monotonic() - start < 60
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"mcugen: error: {port}: "), err
