"""What both power-monitor drivers need from a serial port: opening it with one clear error, reading
with a deadline, and a background capture of the sample stream.

While a monitor streams, the host is busy with the device (an `infer` command can take minutes), but
a USB CDC port must be read continuously or the instrument drops samples: `Capture` reads in a
thread into memory, bounded by `MAX_CAPTURE_BYTES`, and keeps the first link error for the main
thread to raise. Every wait is bounded by a monotonic deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import ClassVar

import serial

from mcugen.errors import McugenError, RunError

try:  # pyserial's flush() on a port whose other end hung up raises termios.error (POSIX)
    from termios import error as _TermiosError

    _TERMIOS_ERRORS: tuple[type[Exception], ...] = (_TermiosError,)
except ImportError:  # pragma: no cover - Windows
    _TERMIOS_ERRORS = ()

#: What a broken link raises from pyserial (TypeError: reading a port closed under the reader).
LINK_ERRORS: tuple[type[Exception], ...] = (
    serial.SerialException,
    OSError,
    TypeError,
    *_TERMIOS_ERRORS,
)

#: A capture larger than this is an error (the PPK2 streams 400 kB/s: 10 minutes is 240 MB).
MAX_CAPTURE_BYTES = 512 << 20
#: Longest a read blocks, so that loops check their deadline and stop flag often.
READ_TIMEOUT_S = 0.05


def open_port(port: str, baudrate: int, label: str) -> serial.SerialBase:
    """`port` (a device path or pyserial URL) opened with a short read timeout."""
    try:
        return serial.serial_for_url(port, baudrate=baudrate, timeout=READ_TIMEOUT_S)
    except (serial.SerialException, ValueError, OSError) as exc:
        raise RunError(
            f"cannot open the {label} ({exc})",
            where=port,
            hint=f"check the port name, that the {label} is plugged in and that no other "
            "program holds it",
        ) from None


def read_chunk(ser: serial.SerialBase) -> bytes:
    """What the port has now (waits at most READ_TIMEOUT_S); OSError-like failures propagate."""
    return bytes(ser.read(max(1, ser.in_waiting)))


def read_until(
    ser: serial.SerialBase,
    buffer: bytearray,
    done: Callable[[bytearray], bool],
    deadline: float,
    fail: Callable[[str], RunError],
) -> None:
    """Append what `ser` sends to `buffer` until `done(buffer)`; `fail(what)` is raised when the
    deadline passes, the link breaks, or the buffer outgrows MAX_CAPTURE_BYTES."""
    while not done(buffer):
        if time.monotonic() > deadline:
            raise fail("no reply before the deadline")
        if len(buffer) > MAX_CAPTURE_BYTES:
            raise fail(f"more than {MAX_CAPTURE_BYTES} bytes without the expected reply")
        try:
            buffer += read_chunk(ser)
        except LINK_ERRORS as exc:
            raise fail(f"lost the link ({exc})") from None


class Capture:
    """Reads `ser` in a daemon thread into `data` until `finish()`; the first link error is kept
    in `error` (the thread then ends)."""

    def __init__(self, ser: serial.SerialBase, already: bytes = b"") -> None:
        self.ser = ser
        self.data = bytearray(already)  # what arrived before the capture began
        self.error: str = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="power-capture", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                chunk = read_chunk(self.ser)
            except LINK_ERRORS as exc:
                self.error = f"lost the link mid-acquisition ({exc})"
                return
            with self._lock:
                self.data += chunk
                if len(self.data) > MAX_CAPTURE_BYTES:
                    self.error = f"the acquisition outgrew {MAX_CAPTURE_BYTES} bytes"
                    return

    def snapshot(self) -> bytes:
        with self._lock:
            return bytes(self.data)

    def wait_for(self, done: Callable[[bytes], bool], deadline: float) -> bool:
        """Whether `done(data)` became true before the deadline or a link error."""
        while time.monotonic() <= deadline and self._thread.is_alive():
            if done(self.snapshot()):
                return True
            time.sleep(0.01)
        return done(self.snapshot())

    def finish(self, timeout: float = 2.0) -> bytes:
        """Stop reading, then take what the OS still holds; the bytes captured."""
        self._stop.set()
        self._thread.join(timeout)
        if not self.error and not self._thread.is_alive():
            try:
                while self.ser.in_waiting and len(self.data) <= MAX_CAPTURE_BYTES:
                    self.data += self.ser.read(self.ser.in_waiting)
            except LINK_ERRORS as exc:
                self.error = f"lost the link at the end of the acquisition ({exc})"
        return self.snapshot()


class MonitorPort:
    """What both drivers share: the port they own while used as a context manager, and leaving
    it: `_shutdown` (stop streaming, supply off) is best effort when an error is already on its
    way, and the port is closed whatever happens."""

    label: ClassVar[str]
    #: what to check when the link fails (the one line's hint)
    port_hint: ClassVar[str]
    port: str
    _ser: serial.SerialBase | None = None
    _capture: Capture | None = None

    @property
    def ser(self) -> serial.SerialBase:
        if self._ser is None:
            raise RuntimeError("use the monitor as a context manager")
        return self._ser

    @staticmethod
    def supply_millivolts(name: str, millivolts: int, low: int, high: int) -> int:
        """`millivolts`, when the monitor `name` can supply it (`low` to `high` mV); else the
        user's one error line."""
        if not low <= millivolts <= high:
            raise McugenError(
                f"the {name} supplies {low} to {high} mV, not {millivolts}",
                hint="set --supply-mv within that range",
            )
        return millivolts

    def _shutdown(self) -> None:
        raise NotImplementedError

    def _fail(self, what: str) -> RunError:
        return RunError(f"{self.label}: {what}", where=self.port, hint=self.port_hint)

    def __exit__(self, kind: type[BaseException] | None, exc: object, tb: object) -> None:
        try:
            self._shutdown()
        except RunError:
            if kind is None:
                raise
        finally:
            if self._ser is not None:
                self._ser.close()
