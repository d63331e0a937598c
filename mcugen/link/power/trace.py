"""A power monitor's current trace and the energy of each inference in it.

MLPerf Tiny's energy mode (mlcommons/tiny, `benchmark/api/internally_implemented.cpp`, `ee_infer`):
on `infer N W%` the device runs W warm-ups, then calls `th_timestamp()`, runs the N timed
inferences, and calls `th_timestamp()` again. In energy mode `th_timestamp()` pulls a GPIO low for
at least 1 us instead of printing `m-lap-us-...`, and the power monitor records the falling edge.
So the marks come in pairs, one pair per `infer` command, and the EnergyRunner takes the energy
between the two marks of a pair divided by N as the energy of one inference.

`energy_per_inference` does the same: window k runs from mark 2k to mark 2k+1 (samples
[start, end)), its energy is sum(I) * V / rate, and each round's figure is divided by N.
The spread (standard deviation, min, max) is over the rounds, not over single inferences, which
no pair of marks separates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcugen.errors import RunError

#: A window of fewer samples than this says nothing about its energy.
MIN_WINDOW_SAMPLES = 4


@dataclass(frozen=True)
class PowerTrace:
    """Current samples of one acquisition, with the GPIO timestamp marks found in it."""

    rate_hz: float
    amperes: np.ndarray  # float64, one value per sample period
    volts: float  # the supply voltage the monitor applied to the device
    marks: tuple[int, ...]  # sample index of each falling edge of the timestamp GPIO
    source: str = ""  # e.g. "LPM01A on /dev/ttyACM1", for messages
    mark_input: str = ""  # where the timestamp GPIO is wired, e.g. "D7", for messages
    checkpoints: tuple[tuple[int, float], ...] = field(default=())  # (sample, seconds) stamps

    @property
    def seconds(self) -> float:
        return len(self.amperes) / self.rate_hz


@dataclass(frozen=True)
class Window:
    """One pair of marks: `inferences` inferences between samples `start` and `end`."""

    start: int
    end: int
    inferences: int
    energy_uj: float  # per inference
    seconds: float  # per inference

    @property
    def power_mw(self) -> float:
        return self.energy_uj / self.seconds * 1e-3


@dataclass(frozen=True)
class EnergyResult:
    """Energy and time per inference over the windows of one trace."""

    windows: tuple[Window, ...]
    volts: float
    rate_hz: float

    @property
    def count(self) -> int:
        """Inferences measured, over all windows."""
        return sum(w.inferences for w in self.windows)

    def _energies(self) -> np.ndarray:
        return np.array([w.energy_uj for w in self.windows], dtype=np.float64)

    @property
    def mean_uj(self) -> float:
        """Mean energy per inference, each window weighted by its inferences."""
        weights = np.array([w.inferences for w in self.windows], dtype=np.float64)
        return float(np.average(self._energies(), weights=weights))

    @property
    def std_uj(self) -> float:
        """Sample standard deviation over the windows (0 for one window)."""
        values = self._energies()
        return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0

    @property
    def min_uj(self) -> float:
        return float(self._energies().min())

    @property
    def max_uj(self) -> float:
        return float(self._energies().max())

    @property
    def mean_s(self) -> float:
        return sum(w.seconds * w.inferences for w in self.windows) / self.count

    def as_dict(self) -> dict[str, Any]:
        return {
            "uj_per_inference": self.mean_uj,
            "std_uj": self.std_uj,
            "min_uj": self.min_uj,
            "max_uj": self.max_uj,
            "us_per_inference": self.mean_s * 1e6,
            "mw": self.mean_uj / self.mean_s * 1e-3,
            "count": self.count,
            "windows": [
                {"start": w.start, "end": w.end, "inferences": w.inferences, "uj": w.energy_uj}
                for w in self.windows
            ],
            "volts": self.volts,
            "rate_hz": self.rate_hz,
        }


def energy_per_inference(
    trace: PowerTrace,
    *,
    inferences: int,
    windows: int | None = None,
    min_window_samples: int = MIN_WINDOW_SAMPLES,
) -> EnergyResult:
    """Energy and time per inference between each pair of marks of `trace`, each pair around
    `inferences` inferences; `windows`, when given, is how many pairs the run must have left.

    O(samples). Errors (RunError naming the trace's source): no marks, an odd number of marks,
    a number of pairs other than `windows`, a window under `min_window_samples` samples."""
    if inferences < 1:
        raise ValueError(f"inferences must be positive, not {inferences}")
    pairs = _mark_pairs(trace, windows)
    found = []
    for k, (start, end) in enumerate(pairs):
        if end - start < min_window_samples:
            micros = (end - start) / trace.rate_hz * 1e6
            raise RunError(
                f"inference window {k + 1} spans {end - start} samples ({micros:.0f} us at "
                f"{trace.rate_hz:,.0f} samples/s), too few to measure",
                where=trace.source,
                hint="time more inferences per window (--count) or sample faster",
            )
        joules = float(np.sum(trace.amperes[start:end], dtype=np.float64)) * trace.volts
        joules /= trace.rate_hz
        seconds = (end - start) / trace.rate_hz
        uj = joules * 1e6 / inferences
        found.append(Window(start, end, inferences, uj, seconds / inferences))
    return EnergyResult(tuple(found), trace.volts, trace.rate_hz)


def _mark_pairs(trace: PowerTrace, windows: int | None) -> list[tuple[int, int]]:
    """(start, end) sample of each window: marks 2k and 2k+1."""
    marks = trace.marks
    wiring = f" to the monitor's {trace.mark_input} input" if trace.mark_input else ""
    if not marks:
        raise RunError(
            f"no GPIO timestamp marks in {len(trace.amperes)} samples",
            where=trace.source,
            hint="run energy-mode firmware (m-timestamp-mode-energy) with its timestamp pin "
            f"wired{wiring}",
        )
    if len(marks) % 2:
        raise RunError(
            f"{len(marks)} GPIO timestamp marks: they come in pairs around each infer command, "
            "so one was missed or an edge is spurious",
            where=trace.source,
            hint=f"check the timestamp wire{wiring} and its ground",
        )
    if windows is not None and len(marks) != 2 * windows:
        raise RunError(
            f"{len(marks)} GPIO timestamp marks for {windows} infer commands (expected "
            f"{2 * windows})",
            where=trace.source,
            hint=f"check the timestamp wire{wiring}: another signal may toggle it",
        )
    if any(b <= a for a, b in zip(marks, marks[1:], strict=False)):
        raise RunError("GPIO timestamp marks out of order", where=trace.source)
    return [(marks[i], marks[i + 1]) for i in range(0, len(marks), 2)]


def falling_edges(low: np.ndarray, *, min_low_samples: int = 1) -> tuple[int, ...]:
    """Sample indices where a logic input goes from high to low and stays low for at least
    `min_low_samples` samples (`low`: one bool a sample, True when the input is low).
    MLPerf's timestamp holds the pin low >= 1 us: one sample at 100 kS/s is 10 us, so a
    sampled input (the PPK2's) needs a hold of one sample period to be seen at all."""
    low = np.asarray(low, dtype=bool)
    if len(low) < 2:
        return ()
    starts = np.flatnonzero(low[1:] & ~low[:-1]) + 1
    if min_low_samples <= 1:
        return tuple(int(i) for i in starts)
    runs = np.convolve(low.astype(np.int64), np.ones(min_low_samples, dtype=np.int64), "valid")
    held = [int(i) for i in starts if i < len(runs) and runs[i] == min_low_samples]
    return tuple(held)
