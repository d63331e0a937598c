"""Nordic Power Profiler Kit II driver: its binary protocol over USB CDC, written from the protocol
facts (not the GPL `ppk2-api` package, which it does not import).

Protocol facts (Nordic's pc-nrfconnect-ppk and the public IRNAS/ppk2-api-python describe them):
- commands are raw bytes: 0x19 read metadata; 0x11 0x02 source-meter mode (0x11 0x01 ampere
  meter); 0x0d hi lo set the source voltage in mV (big-endian, 800 to 5000); 0x0c 0x01 / 0x0c
  0x00 switch the device's supply on / off; 0x06 start and 0x07 stop streaming.
- the metadata is text, `key: value` lines ended by `END`: per range r (0 to 4) the shunt `Rr`
  and the calibration `GSr GIr Or Sr Ir UGr`, plus `Calibrated`, `HW`, `IA`.
- samples arrive at 100 kS/s as 4-byte little-endian words: bits 0-13 the ADC value, 14-16 the
  range (values above 4 read as 4), 18-23 a counter that steps by one each sample (mod 64), and
  24-31 the eight logic inputs D0-D7.
- a sample converts as r = (4 * adc - O) * (1.8 / 163840) / R amperes before gain, then
  I = UG * (r * (GS * r + GI) + S * V + I0), V the source voltage in volts.
  The public API also smooths a few samples after each range switch (a spike filter); that is not
  done here, so a trace keeps the raw calibrated values.
A counter that does not step by one means bytes were lost: an error, not a guess.
"""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
import serial

from mcugen.errors import RunError
from mcugen.link.power.link import LINK_ERRORS, Capture, MonitorPort, open_port, read_until
from mcugen.link.power.trace import PowerTrace, falling_edges

LABEL = "Nordic PPK2"
RATE_HZ = 100_000
GET_METADATA = 0x19
SET_POWER_MODE = 0x11
SOURCE_METER = 0x02
REGULATOR_SET = 0x0D
DEVICE_RUNNING_SET = 0x0C
AVERAGE_START = 0x06
AVERAGE_STOP = 0x07
MIN_MV, MAX_MV = 800, 5000
RANGES = 5
ADC_VOLTS_PER_COUNT = 1.8 / 163840
#: Shunt resistors (ohms) of ranges 0-4 when the metadata gives none or zero.
DEFAULT_SHUNTS = (1031.64, 101.65, 10.15, 0.94, 0.043)
#: Calibration defaults: the identity.
DEFAULT_CALIBRATION = {"GS": 0.0, "GI": 1.0, "O": 0.0, "S": 0.0, "I": 0.0, "UG": 1.0}


class Ppk2(MonitorPort):
    """One PPK2 on a serial port, in source-meter mode; a context manager that always switches
    the device's supply off and closes the port."""

    name: ClassVar[str] = "ppk2"
    label: ClassVar[str] = LABEL
    port_hint: ClassVar[str] = (
        "check the USB cable and that this port is the PPK2's first one (its data port, not the "
        "debug one)"
    )

    def __init__(
        self, port: str, *, millivolts: int = 3300, logic_channel: int = 0, timeout: float = 2.0
    ) -> None:
        self.millivolts = self.supply_millivolts("PPK2", millivolts, MIN_MV, MAX_MV)
        if not 0 <= logic_channel < 8:
            raise ValueError(f"the PPK2 has logic inputs D0-D7, not D{logic_channel}")
        self.port = port
        self.logic_channel = logic_channel
        self.timeout = timeout
        self.calibration = parse_metadata("")
        self._ser: serial.SerialBase | None = None
        self._capture: Capture | None = None

    @property
    def mark_input(self) -> str:
        return f"D{self.logic_channel}"

    def __enter__(self) -> Ppk2:
        self._ser = open_port(self.port, 9600, LABEL)  # USB CDC: the baud rate is ignored
        try:
            self.calibration = parse_metadata(self._read_metadata())
        except BaseException:
            self._ser.close()
            raise
        return self

    def _shutdown(self) -> None:
        """Stop streaming and switch the supply off (best effort: MonitorPort.__exit__)."""
        if self._capture is not None:
            self._capture.finish()
            self._capture = None
            self._send(AVERAGE_STOP)
        self._send(DEVICE_RUNNING_SET, 0)

    def _send(self, *command: int) -> None:
        try:
            self.ser.write(bytes(command))
            self.ser.flush()
        except LINK_ERRORS as exc:
            raise self._fail(f"lost the link ({exc})") from None

    def _read_metadata(self) -> str:
        self.ser.reset_input_buffer()
        self._send(GET_METADATA)
        buffer = bytearray()
        deadline = time.monotonic() + self.timeout

        def fail(what: str) -> RunError:
            return self._fail(f"{what} to the metadata request" if "reply" in what else what)

        read_until(self.ser, buffer, lambda b: b"END" in b, deadline, fail)
        return buffer[: buffer.index(b"END")].decode("ascii", errors="replace")

    def power_on(self) -> None:
        """Source-meter mode at the set voltage, then the device's supply on."""
        self._send(SET_POWER_MODE, SOURCE_METER)
        self._send(REGULATOR_SET, self.millivolts >> 8, self.millivolts & 0xFF)
        self._send(DEVICE_RUNNING_SET, 1)

    def start(self) -> None:
        self.ser.reset_input_buffer()
        self._send(AVERAGE_START)
        self._capture = Capture(self.ser)

    def stop(self) -> PowerTrace:
        """Stop streaming; the trace once the stream has gone quiet (a bounded wait)."""
        capture = self._capture
        if capture is None:
            raise RuntimeError("stop() without start()")
        try:
            self._send(AVERAGE_STOP)
        except RunError:
            capture.error = capture.error or "lost the link mid-acquisition (sending stop)"
        _wait_quiet(capture, time.monotonic() + self.timeout)
        data = capture.finish()
        self._capture = None
        if capture.error:
            raise self._fail(capture.error)
        return self.decode(data)

    def decode(self, data: bytes) -> PowerTrace:
        """The trace of the streamed words (a trailing partial word is dropped)."""
        words = np.frombuffer(data[: len(data) - len(data) % 4], dtype="<u4")
        if len(words) == 0:
            raise self._fail("no samples streamed between start and stop")
        counter = (words >> 18) & 0x3F
        steps = np.mod(np.diff(counter.astype(np.int64)), 64)
        lost = np.flatnonzero(steps != 1)
        if len(lost):
            raise self._fail(
                f"sample counter broke after sample {int(lost[0])} of {len(words)}: bytes "
                "were lost on the link (a busy USB hub?)"
            )
        amperes = to_amperes(words, self.calibration, self.millivolts / 1000)
        logic = (words >> 24) & 0xFF
        low = ((logic >> self.logic_channel) & 1) == 0
        return PowerTrace(
            rate_hz=float(RATE_HZ),
            amperes=amperes,
            volts=self.millivolts / 1000,
            marks=falling_edges(low),
            source=f"{LABEL} on {self.port}",
            mark_input=self.mark_input,
        )


def _wait_quiet(capture: Capture, deadline: float, quiet_s: float = 0.2) -> None:
    """Until the capture has not grown for `quiet_s`, or the deadline."""
    size = -1
    while time.monotonic() < deadline and not capture.error:
        now = len(capture.snapshot())
        if now == size:
            return
        size = now
        time.sleep(quiet_s)


def parse_metadata(text: str) -> dict[str, tuple[float, ...]]:
    """Per-range calibration from the metadata text: `R`, `GS`, `GI`, `O`, `S`, `I`, `UG`, each a
    tuple of five floats; absent keys keep the defaults, as does a shunt of zero."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, text_value = line.partition(":")
        if sep:
            values[name.strip()] = text_value.strip()
    table: dict[str, tuple[float, ...]] = {}
    for key, default in (("R", None), *DEFAULT_CALIBRATION.items()):
        row: list[float] = []
        for r in range(RANGES):
            fallback = DEFAULT_SHUNTS[r] if default is None else default
            value = _number(values.get(f"{key}{r}"), fallback)
            row.append(fallback if key == "R" and value == 0 else value)
        table[key] = tuple(row)
    return table


def _number(text: str | None, fallback: float) -> float:
    try:
        return fallback if text is None else float(text)
    except ValueError:
        return fallback


def to_amperes(words: np.ndarray, cal: dict[str, tuple[float, ...]], volts: float) -> np.ndarray:
    """Calibrated current of each sample word (see the module docstring for the formula)."""
    rng = np.minimum((words >> 14) & 0x7, RANGES - 1).astype(np.intp)
    adc = (words & 0x3FFF).astype(np.float64) * 4

    def per(key: str) -> np.ndarray:
        return np.asarray(cal[key], dtype=np.float64)[rng]

    raw = (adc - per("O")) * (ADC_VOLTS_PER_COUNT / per("R"))
    return per("UG") * (raw * (per("GS") * raw + per("GI")) + (per("S") * volts + per("I")))
