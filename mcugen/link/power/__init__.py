"""Power monitors: drivers that supply a device, record its current and the GPIO timestamp marks
of MLPerf Tiny's energy mode, and return a `PowerTrace` (trace.py), which `energy_per_inference`
turns into energy per inference.

A monitor is named on the command line as `NAME:PORT`, e.g. `--power lpm01a:/dev/ttyACM1`;
`POWER_MONITORS` (a Registry, mcugen/registry.py) maps each name to its driver class.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import ClassVar, Protocol

from mcugen.errors import McugenError
from mcugen.link.power.lpm01a import Lpm01a
from mcugen.link.power.ppk2 import Ppk2
from mcugen.link.power.trace import EnergyResult, PowerTrace, energy_per_inference
from mcugen.registry import Registry

__all__ = [
    "POWER_MONITORS",
    "EnergyResult",
    "PowerMonitor",
    "PowerSpec",
    "PowerTrace",
    "energy_per_inference",
    "open_monitor",
    "parse_power_spec",
]


class PowerMonitor(Protocol):
    """What a driver does, in this order, inside `with`: `power_on()` (configure, then supply
    the device), `start()` (stream in the background), `stop()` (the trace). Leaving the `with`
    switches the supply off and closes the port, on success, error or KeyboardInterrupt."""

    name: ClassVar[str]
    label: ClassVar[str]
    port: str

    def __enter__(self) -> PowerMonitor: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def power_on(self) -> None: ...

    def start(self) -> None: ...

    def stop(self) -> PowerTrace: ...


class MonitorFactory(Protocol):
    """A driver class: its constructor takes the port and the supply voltage."""

    def __call__(self, port: str, *, millivolts: int) -> PowerMonitor: ...


#: The drivers by name; the LPM01A is the one MLPerf Tiny's EnergyRunner uses.
POWER_MONITORS: Registry[MonitorFactory] = Registry("power monitor", default="lpm01a")
POWER_MONITORS.add("lpm01a", Lpm01a)
POWER_MONITORS.add("ppk2", Ppk2)


@dataclass(frozen=True)
class PowerSpec:
    """A monitor named on the command line."""

    name: str
    port: str


def parse_power_spec(text: str) -> PowerSpec:
    """`NAME:PORT` (the port may itself hold colons, e.g. a pyserial URL)."""
    name, sep, port = text.partition(":")
    name = name.strip().lower()
    POWER_MONITORS.get(name)  # the registry's error for an unknown name
    if not sep or not port.strip():
        raise McugenError(
            f"--power {text} names no port",
            hint=f"add the monitor's serial port, e.g. --power {name}:/dev/ttyACM1",
        )
    return PowerSpec(name, port.strip())


def open_monitor(spec: PowerSpec, *, millivolts: int = 3300) -> PowerMonitor:
    """The driver of `spec`, not yet opened: use it as a context manager."""
    return POWER_MONITORS.get(spec.name)(spec.port, millivolts=millivolts)
