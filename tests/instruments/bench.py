"""The synthetic current every simulated instrument streams (`Bench`), the pseudo-terminal it
speaks on, and the thread that serves it."""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


class Instrument(Protocol):
    """A simulated instrument: `serve` answers on its pty until `stop` is set."""

    def serve(self, stop: threading.Event) -> None: ...


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
def running(target: Instrument, pty: Pty) -> Iterator[Pty]:
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
