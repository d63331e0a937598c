"""A simulated STM32 LPM01A (X-NUCLEO-LPM01A): its text commands and `ascii_dec` stream."""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator

import numpy as np

from instruments.bench import Bench, Pty, running

# --- LPM01A ------------------------------------------------------------------------------------


def lpm01a_line(amperes: float) -> tuple[str, float]:
    """The `ascii_dec` line of a current (4-digit mantissa, exponent) and the value it means."""
    exponent = math.floor(math.log10(amperes)) - 3
    mantissa = round(amperes / 10.0**exponent)
    if mantissa >= 10000:
        mantissa, exponent = mantissa // 10, exponent + 1
    text = f"{mantissa:04d}{exponent:+03d}"
    return text, float(f"{mantissa}e{exponent}")


class Lpm01aSim:
    """The LPM01A's text protocol: `ack`s, an acquisition that streams the bench's current."""

    def __init__(self, pty: Pty, bench: Bench, fault: str = "") -> None:
        self.pty, self.bench, self.fault = pty, bench, fault
        self.streaming = False
        self.commands: list[str] = []
        self._pending = b""

    def serve(self, stop: threading.Event) -> None:
        while not stop.is_set() and not self.pty.closed:
            self._pending += self.pty.read()
            while b"\n" in self._pending:
                line, self._pending = self._pending.split(b"\n", 1)
                self._command(line.decode().strip())
            if self.streaming and self.fault != "stall":
                self._stream(self.bench.next_segment())

    def _command(self, text: str) -> None:
        self.commands.append(text)
        if self.fault == "silent":
            return
        if self.fault == "error" and text.startswith("volt"):
            self.pty.write(b"PowerShield > error\r\nError detail: voltage out of range\r\n")
            return
        if text == "stop" and self.fault == "stall":
            return
        if text == "stop":
            while self.bench.rounds:
                self._stream(self.bench.next_segment())
            self.streaming = False
            self.pty.write(b"ack stop\r\nAcquisition completed\r\n")
            return
        self.pty.write(f"PowerShield > ack {text}\r\n".encode())
        if text in ("pwr on", "pwr off"):
            self.bench.switch(text == "pwr on")
        self.streaming = self.streaming or text == "start"

    def _stream(self, segment: tuple[np.ndarray, list[int]]) -> None:
        amperes, marks = segment
        out = []
        for i, value in enumerate(amperes):
            index = len(self.bench.sent)
            if i in marks:
                out.append("event 1 fal")
                self.bench.marks.append(index)
            if index % int(self.bench.rate_hz) == 0:
                out.append(f"TimeStamp: {index // 1000:03d}s {index % 1000:03d}ms, buff 00%")
            text, sent = lpm01a_line(float(value))
            if self.fault == "garble" and self.bench.marks and index == self.bench.marks[0] + 3:
                text = text[:2] + text[4:]
            out.append(text)
            self.bench.sent.append(sent)
        self.pty.write(("\r\n".join(out) + "\r\n").encode())
        if self.fault == "disconnect" and self.bench.marks:
            self.pty.hang_up()


@contextlib.contextmanager
def simulated_lpm01a(bench: Bench, fault: str = "") -> Iterator[Lpm01aSim]:
    pty = Pty()
    sim = Lpm01aSim(pty, bench, fault)
    with running(sim, pty):
        yield sim
