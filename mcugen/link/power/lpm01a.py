"""ST X-NUCLEO-LPM01A (PowerShield) driver: its text protocol over USB VCP 0483:5740.

Protocol facts (ST UM2269 and the MLPerf Tiny runner's use of the board; summarised in
notes/protocols.md): 3,686,400 baud; one command a line; the board answers `ack <command>` or a
line starting `error` followed by `Error detail: <text>`; a prompt `PowerShield > ` may precede a
reply. Firmware 1.0.6 or newer.

Set-up, as the MLPerf Tiny runner does it but streaming current rather than energy:
`htc` (host takes control), `pwr off`, `acqtime inf`, `trigsrc sw`, `eventsrc d7 fal` (report
falling edges of the D7 input: the device's timestamp GPIO), `output current`,
`format ascii_dec`, `freq <rate>`, `volt <mV>m`; then `pwr on` supplies the device.
Run: `start`, ... `stop`, then the board prints `Acquisition completed`. Teardown: `pwr off`,
`hrc` (hand control back to the board's own interface).

Streamed lines: samples `dddd[+-]dd` (mantissa and base-10 exponent, amperes: `6409-07` is
6409e-7 A), `TimeStamp: <s>s <ms>ms, ...` progress stamps, and `event <n> ris|fal` for each edge
of the event input, placed between the samples around it: an edge is counted at the index of the
next sample, so within one sample period. `ascii_dec` streams at most 10 kS/s.
"""

from __future__ import annotations

import re
import time
from typing import ClassVar

import numpy as np
import serial

from mcugen.errors import RunError
from mcugen.link.power.link import LINK_ERRORS, Capture, MonitorPort, open_port, read_until
from mcugen.link.power.trace import PowerTrace

BAUDRATE = 3_686_400
LABEL = "X-NUCLEO-LPM01A"
PROMPT = "PowerShield >"
COMPLETED = "Acquisition completed"
#: The supply voltages the board can set (UM2269).
MIN_MV, MAX_MV = 1800, 3300
#: Highest sample rate of the `ascii_dec` format.
MAX_ASCII_RATE_HZ = 10_000

_SAMPLE = re.compile(r"(\d{4})([+-]\d{2})")
_EVENT = re.compile(r"event (\d+) (ris|fal)")
_TIMESTAMP = re.compile(r"TimeStamp:?\s*(\d+)s\s*(\d+)ms.*")
_DIGITS = re.compile(r"[0-9+\-]+")  # a line of digits that is no sample: bytes were lost


class Lpm01a(MonitorPort):
    """One LPM01A on a serial port; a context manager that always powers off and closes."""

    name: ClassVar[str] = "lpm01a"
    label: ClassVar[str] = LABEL
    port_hint: ClassVar[str] = (
        "check the USB cable, that this port is the LPM01A's (USB 0483:5740) and that its "
        "firmware is 1.0.6 or newer"
    )
    mark_input: ClassVar[str] = "D7"

    def __init__(
        self, port: str, *, millivolts: int = 3300, rate_hz: int = 1000, timeout: float = 2.0
    ) -> None:
        self.millivolts = self.supply_millivolts("LPM01A", millivolts, MIN_MV, MAX_MV)
        if not 0 < rate_hz <= MAX_ASCII_RATE_HZ:
            raise ValueError("the LPM01A's ascii_dec format streams 1 to 10,000 samples/s")
        self.port = port
        self.rate_hz = rate_hz
        self.timeout = timeout
        self._ser: serial.SerialBase | None = None
        self._buffer = bytearray()
        self._capture: Capture | None = None

    # --- the port ------------------------------------------------------------------------------

    def __enter__(self) -> Lpm01a:
        self._ser = open_port(self.port, BAUDRATE, LABEL)
        return self

    def _shutdown(self) -> None:
        """Power the device off and hand control back (best effort: MonitorPort.__exit__)."""
        if self._capture is not None:
            self._capture.finish()
            self._capture = None
        for text in ("pwr off", "hrc"):
            self.command(text, timeout=min(self.timeout, 1.0))

    def _write(self, text: str) -> None:
        try:
            self.ser.write(text.encode("ascii") + b"\n")
            self.ser.flush()
        except LINK_ERRORS as exc:
            raise self._fail(f"lost the link ({exc})") from None

    def _read_line(self, deadline: float, text: str) -> str:
        def fail(what: str) -> RunError:
            return self._fail(f"{what} to '{text}'" if "reply" in what else what)

        read_until(self.ser, self._buffer, lambda b: b"\n" in b, deadline, fail)
        end = self._buffer.index(b"\n")
        raw = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return _clean(raw)

    # --- commands ------------------------------------------------------------------------------

    def command(self, text: str, *, timeout: float | None = None) -> None:
        """Send `text`; return at its `ack`, raise the board's error detail as one line."""
        self._write(text)
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            line = self._read_line(deadline, text)
            if line.startswith("ack"):
                return
            if line.startswith("error"):
                raise self._refused(text, line, deadline)

    def _refused(self, text: str, line: str, deadline: float) -> RunError:
        """The error for an `error` reply, with the `Error detail:` line that follows it."""
        detail = line
        try:
            for _ in range(8):
                following = self._read_line(min(deadline, time.monotonic() + 0.5), text)
                if following.startswith("Error detail:"):
                    detail = following[len("Error detail:") :].strip()
                    break
        except RunError:
            pass
        return RunError(
            f"{LABEL} refused '{text}': {detail}",
            where=self.port,
            hint="check the supply voltage and sample rate are within the board's limits",
        )

    def power_on(self) -> None:
        """Configure the acquisition, then supply the device."""
        rate = f"{self.rate_hz // 1000}k" if self.rate_hz % 1000 == 0 else str(self.rate_hz)
        for text in (
            "htc",
            "pwr off",
            "acqtime inf",
            "trigsrc sw",
            f"eventsrc {self.mark_input.lower()} fal",
            "output current",
            "format ascii_dec",
            f"freq {rate}",
            f"volt {self.millivolts}m",
            "pwr on",
        ):
            self.command(text)

    def start(self) -> None:
        self.command("start")
        self._capture = Capture(self.ser, bytes(self._buffer))  # with what came after the ack
        self._buffer.clear()

    def stop(self) -> PowerTrace:
        """End the acquisition; its trace once the board says `Acquisition completed`."""
        capture = self._capture
        if capture is None:
            raise RuntimeError("stop() without start()")
        try:
            self._write("stop")
        except RunError:
            capture.error = capture.error or "lost the link mid-acquisition (writing 'stop')"
        done = capture.wait_for(
            lambda data: COMPLETED.encode() in data, time.monotonic() + self.timeout
        )
        data = capture.finish()
        self._capture = None
        if capture.error:
            raise self._fail(capture.error)
        if not done:
            raise self._fail(f"no '{COMPLETED}' within {self.timeout:.0f} s of 'stop'")
        return self.parse(data)

    def parse(self, data: bytes) -> PowerTrace:
        """The trace of the bytes streamed between `start` and `Acquisition completed`."""
        amperes: list[float] = []
        marks: list[int] = []
        checkpoints: list[tuple[int, float]] = []
        lines = [_clean(raw) for raw in data.split(b"\n")]
        for i, line in enumerate(lines):
            if line == COMPLETED:
                break
            sample = _SAMPLE.fullmatch(line)
            if sample:
                amperes.append(float(f"{sample.group(1)}e{sample.group(2)}"))
            elif (event := _EVENT.fullmatch(line)) is not None:
                if event.group(2) == "fal":
                    marks.append(len(amperes))
            elif (stamp := _TIMESTAMP.fullmatch(line)) is not None:
                seconds = int(stamp.group(1)) + int(stamp.group(2)) / 1000
                checkpoints.append((len(amperes), seconds))
            elif line.startswith("error"):
                detail = lines[i + 1] if i + 1 < len(lines) else line
                raise self._fail(f"error during the acquisition: {detail}")
            elif _DIGITS.fullmatch(line) or not (line.isascii() and line.isprintable()):
                raise self._fail(
                    f"unreadable line {line[:24]!r} after {len(amperes)} samples (bytes lost "
                    "on the link?)"
                )
        return PowerTrace(
            rate_hz=float(self.rate_hz),
            amperes=np.array(amperes, dtype=np.float64),
            volts=self.millivolts / 1000,
            marks=tuple(marks),
            source=f"{LABEL} on {self.port}",
            mark_input=self.mark_input,
            checkpoints=tuple(checkpoints),
        )


def _clean(raw: bytes) -> str:
    """A streamed line without its `\\r`, prompts and surrounding spaces."""
    return raw.decode("ascii", errors="replace").replace(PROMPT, "").strip("\r\x00 ")
