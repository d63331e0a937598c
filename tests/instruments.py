"""Simulated bench instruments on pseudo-terminals, for the power-monitor tests (no hardware).

Each instrument runs in a thread on the master side of `os.openpty()`; the driver under test opens
the slave path with pyserial, as it would a /dev/ttyACM*. They speak the real protocols (the
LPM01A's text commands, the PPK2's bytes, the MLPerf Tiny runner's `%` commands) and stream a
synthetic current from a shared `Bench`: idle current between inferences, a higher current during
each, and a GPIO mark (a falling edge) before and after each `infer` round, as MLPerf Tiny's
energy mode does. The bench records the currents the instrument actually sent (after its own
quantisation), so a test knows the exact energy the driver must find.

Faults: `noise` (Gaussian, amperes), and `fault` one of "error" (refuse the `volt` command),
"silent" (never answer), "garble" (a sample line loses bytes), "drop" (the byte stream loses a
byte), "disconnect" (close the master mid-stream), "stall" (stop streaming, never complete).
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import serial

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


@dataclass
class Bench:
    """The device's current: `idle_a` between inferences, `active_a` for `samples_per_inference`
    samples per inference; each queued round is [gap idle][mark][N inferences][mark][gap idle]."""

    idle_a: float = 2e-3
    active_a: float = 20e-3
    samples_per_inference: int = 40
    gap_samples: int = 30
    noise_a: float = 0.0
    seed: int = 0
    volts: float = 3.3
    rounds: deque[int] = field(default_factory=deque)
    powered: threading.Event = field(default_factory=threading.Event)
    sent: list[float] = field(default_factory=list)  # amperes as the instrument encoded them
    marks: list[int] = field(default_factory=list)  # sample index of each mark sent
    drained: threading.Condition = field(default_factory=threading.Condition)
    rate_hz: float = 1000.0

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    boots: int = 0  # times the supply was switched on

    def switch(self, on: bool) -> None:
        """The monitor switched the device's supply."""
        if on and not self.powered.is_set():
            self.boots += 1
            self.powered.set()
        elif not on:
            self.powered.clear()

    def queue_round(self, inferences: int) -> None:
        with self.drained:
            self.rounds.append(inferences)

    def wait_drained(self, timeout: float = 5.0) -> None:
        """Until every queued round was streamed (an `infer` ends after its inferences)."""
        with self.drained:
            self.drained.wait_for(lambda: not self.rounds, timeout)

    def next_segment(self) -> tuple[np.ndarray, list[int]]:
        """Currents of the next round (marks relative to its start), or a little idle."""
        with self.drained:
            if not self.rounds:
                self.drained.notify_all()
                return self._noisy(np.full(8, self.idle_a)), []
            n = self.rounds.popleft()
        gap = np.full(self.gap_samples, self.idle_a)
        active = np.full(n * self.samples_per_inference, self.active_a)
        marks = [self.gap_samples, self.gap_samples + len(active)]
        return self._noisy(np.concatenate([gap, active, gap])), marks

    def _noisy(self, amperes: np.ndarray) -> np.ndarray:
        if self.noise_a:
            amperes = amperes + self.rng.normal(0.0, self.noise_a, len(amperes))
        return np.maximum(amperes, 1e-7)

    def exact_uj(self, window: int, inferences: int) -> float:
        """Energy per inference of mark pair `window` from what was sent."""
        start, end = self.marks[2 * window], self.marks[2 * window + 1]
        return sum(self.sent[start:end]) * self.volts * 1e6 / self.rate_hz / inferences


class Pty:
    """A pseudo-terminal: the simulator owns `master`, the driver opens `path`."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        self.path = os.ttyname(self._slave)
        self.closed = False

    def read(self, timeout: float = 0.01) -> bytes:
        if self.closed or not select.select([self.master], [], [], timeout)[0]:
            return b""
        try:
            return os.read(self.master, 4096)
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        if not self.closed:
            with contextlib.suppress(OSError):
                os.write(self.master, data)

    def hang_up(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.master)

    def close(self) -> None:
        self.hang_up()
        os.close(self._slave)


@contextlib.contextmanager
def running(target: Lpm01aSim | Ppk2Sim | MlperfDutSim, pty: Pty) -> Iterator[Pty]:
    """Run `target.serve(stop)` in a daemon thread on `pty`; stop and release it afterwards."""
    stop = threading.Event()
    thread = threading.Thread(target=target.serve, args=(stop,), daemon=True)
    thread.start()
    try:
        yield pty
    finally:
        stop.set()
        thread.join(timeout=5)
        pty.close()


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


# --- An MLPerf Tiny device in energy mode --------------------------------------------------------


class MlperfDutSim:
    """The runner protocol of an energy-mode device: prints its banner each time the bench's
    supply comes on, queues a round on the bench for each `infer N W` and answers once the
    monitor streamed it."""

    def __init__(self, pty: Pty, bench: Bench, model_id: str = "unknown", mode: str = "energy"):
        self.pty, self.bench, self.model_id, self.mode = pty, bench, model_id, mode
        self.expecting = 0
        self.loaded = 0
        self._pending = b""

    def serve(self, stop: threading.Event) -> None:
        booted = 0  # the bench's boot this device has announced
        while not stop.is_set() and not self.pty.closed:
            if self.bench.powered.is_set() and booted != self.bench.boots:
                booted = self.bench.boots
                banner = f"m-timestamp-mode-{self.mode}\r\nm-init-done\r\nm-ready\r\n"
                self.pty.write(banner.encode())
            self._pending += self.pty.read()
            while b"%" in self._pending:
                raw, self._pending = self._pending.split(b"%", 1)
                lines = self._answer(raw.decode().strip().split())
                self.pty.write("".join(f"{line}\r\n" for line in [*lines, "m-ready"]).encode())

    def _answer(self, words: list[str]) -> list[str]:
        if words == ["name"]:
            return ["m-name-dut-[simulated]"]
        if words == ["profile"]:
            return ["m-profile-[ULPMark for tinyML Firmware V0.0.1]", f"m-model-[{self.model_id}]"]
        if words[:2] == ["db", "load"]:
            self.expecting, self.loaded = int(words[2]), 0
            return [f"m-[Expecting {self.expecting} bytes]"]
        if words[:1] == ["db"]:
            self.loaded += len(words[1]) // 2
            return ["m-load-done"] if self.loaded >= self.expecting else []
        if words[:1] == ["infer"]:
            n, w = int(words[1]), int(words[2])
            self.bench.queue_round(n)
            self.bench.wait_drained()
            time.sleep(0.02)
            return [f"m-warmup-start-{w}", "m-warmup-done", f"m-infer-start-{n}", "m-infer-done"]
        if words == ["results"]:
            return ["m-results-[0.100,0.900]"]
        return [f"e-[Unknown command: {' '.join(words)}]"]


@contextlib.contextmanager
def simulated_dut(bench: Bench, model_id: str = "unknown", mode: str = "energy") -> Iterator[Pty]:
    pty = Pty()
    with running(MlperfDutSim(pty, bench, model_id, mode), pty):
        yield pty


def acquire(
    monitor: Any, sim: Lpm01aSim | Ppk2Sim, bench: Bench, rounds: int, n: int
) -> tuple[Any, Lpm01aSim | Ppk2Sim]:
    """Drive a driver against its simulated instrument: power on, start, stream `rounds` rounds
    of `n` inferences, stop; then check the driver closed its port and the pty (unless hung up)
    opens again. Returns the trace and the simulator."""
    try:
        with monitor:
            monitor.power_on()
            monitor.start()
            for _ in range(rounds):
                bench.queue_round(n)
            return monitor.stop(), sim
    finally:
        released(monitor, sim)


def read_through(sim: Lpm01aSim | Ppk2Sim, last: Any, seconds: float = 5.0) -> None:
    """Wait until the simulator's thread has read the driver's `last` command: the driver has
    written it when it returns, but on a loaded machine the thread may not have read it yet, and
    leaving the simulator's context stops the thread."""
    deadline = time.monotonic() + seconds
    while sim.commands[-1:] != [last] and time.monotonic() < deadline:
        time.sleep(0.01)


def released(monitor: Any, sim: Lpm01aSim | Ppk2Sim) -> None:
    """The driver closed its port, and the pty (unless hung up) opens again."""
    assert monitor._ser is not None and not monitor._ser.is_open
    if not sim.pty.closed:
        serial.Serial(sim.pty.path, timeout=0.1).close()
