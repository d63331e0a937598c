"""A simulated Nordic PPK2: its command bytes, calibration metadata and sample stream."""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator

import numpy as np

from instruments.bench import Bench, Pty, running

#: The PPK2 simulator's calibration: not the identity, so the driver must apply it.
PPK2_SHUNTS = (1030.0, 101.0, 10.2, 0.95, 0.044)
PPK2_CAL = {
    "O": (40.0, 52.0, 61.0, 70.0, 80.0),
    "GS": (0.0, 0.01, 0.02, 0.0, 0.0),
    "GI": (1.01, 0.99, 1.02, 1.0, 1.0),
    "S": (1e-6, 2e-6, 0.0, 0.0, 0.0),
    "I": (1e-7, -2e-7, 1e-6, 0.0, 0.0),
    "UG": (1.0, 1.003, 0.998, 1.0, 1.0),
}
ADC_VOLTS_PER_COUNT = 1.8 / 163840


# --- PPK2 --------------------------------------------------------------------------------------

PPK2_COMMAND_BYTES = {0x19: 1, 0x11: 2, 0x0D: 3, 0x0C: 2, 0x06: 1, 0x07: 1, 0x20: 1}


def ppk2_metadata() -> bytes:
    lines = ["Calibrated: 1", "HW: 12345", "IA: 56"]
    lines += [f"R{r}: {PPK2_SHUNTS[r]}" for r in range(5)]
    for key, row in PPK2_CAL.items():
        lines += [f"{key}{r}: {row[r]}" for r in range(5)]
    return ("\n".join(lines) + "\nEND\n").encode()


def ppk2_current(r: int, code: int, volts: float) -> float:
    """The simulator's own model of its ADC: the current a code means in range r."""
    c = {k: v[r] for k, v in PPK2_CAL.items()}
    raw = (4 * code - c["O"]) * ADC_VOLTS_PER_COUNT / PPK2_SHUNTS[r]
    return c["UG"] * (raw * (c["GS"] * raw + c["GI"]) + c["S"] * volts + c["I"])


def ppk2_code(amperes: float, volts: float) -> tuple[int, int]:
    """(range, 14-bit code) nearest to `amperes`, in the most sensitive range that holds it."""
    for r in range(5):
        c = {k: v[r] for k, v in PPK2_CAL.items()}
        y = amperes / c["UG"] - c["S"] * volts - c["I"]
        gs, gi = c["GS"], c["GI"]
        raw = y / gi if gs == 0 else (-gi + math.sqrt(gi * gi + 4 * gs * y)) / (2 * gs)
        code = round((raw * PPK2_SHUNTS[r] / ADC_VOLTS_PER_COUNT + c["O"]) / 4)
        if 0 <= code <= 0x3FFF:
            return r, code
    raise ValueError(f"{amperes} A is out of the PPK2's ranges")


class Ppk2Sim:
    """The PPK2's byte protocol: metadata, source mode, supply, a stream of sample words."""

    def __init__(self, pty: Pty, bench: Bench, fault: str = "", mark_low: int = 2) -> None:
        self.pty, self.bench, self.fault, self.mark_low = pty, bench, fault, mark_low
        self.streaming = False
        self.millivolts = 0
        self.counter = 0
        self.commands: list[bytes] = []
        self._pending = b""

    def serve(self, stop: threading.Event) -> None:
        while not stop.is_set() and not self.pty.closed:
            self._pending += self.pty.read()
            while self._pending and len(self._pending) >= PPK2_COMMAND_BYTES.get(
                self._pending[0], 1
            ):
                size = PPK2_COMMAND_BYTES.get(self._pending[0], 1)
                command, self._pending = self._pending[:size], self._pending[size:]
                self._command(command)
            if self.streaming and self.fault != "stall":
                self._stream(self.bench.next_segment())

    def _command(self, command: bytes) -> None:
        self.commands.append(command)
        if self.fault == "silent":
            return
        op = command[0]
        if op == 0x19:
            self.pty.write(ppk2_metadata())
        elif op == 0x0D:
            self.millivolts = command[1] << 8 | command[2]
        elif op == 0x0C:
            self.bench.switch(command[1] == 1)
        elif op == 0x06:
            self.streaming = True
        elif op == 0x07:
            while self.bench.rounds and self.fault != "stall":
                self._stream(self.bench.next_segment())
            self.streaming = False

    def _stream(self, segment: tuple[np.ndarray, list[int]]) -> None:
        amperes, marks = segment
        words = bytearray()
        low = {m + k for m in marks for k in range(self.mark_low)}
        for i, value in enumerate(amperes):
            r, code = ppk2_code(float(value), self.millivolts / 1000)
            if i in marks:
                self.bench.marks.append(len(self.bench.sent))
            self.bench.sent.append(ppk2_current(r, code, self.millivolts / 1000))
            logic = 0xFE if i in low else 0xFF
            word = code | r << 14 | (self.counter & 0x3F) << 18 | logic << 24
            self.counter += 1
            words += word.to_bytes(4, "little")
        if self.fault == "drop" and marks:
            del words[4 * marks[0] + 1]
        self.pty.write(bytes(words))
        if self.fault == "disconnect" and self.bench.marks:
            self.pty.hang_up()


@contextlib.contextmanager
def simulated_ppk2(bench: Bench, fault: str = "") -> Iterator[Ppk2Sim]:
    bench.rate_hz = 100_000.0
    pty = Pty()
    sim = Ppk2Sim(pty, bench, fault)
    with running(sim, pty):
        yield sim
