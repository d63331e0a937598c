"""Driving a power-monitor driver against its simulated instrument."""

from __future__ import annotations

import time
from typing import Any

import serial

from instruments.bench import Bench
from instruments.lpm01a import Lpm01aSim
from instruments.ppk2 import Ppk2Sim


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
