"""A measured current trace for the HTML report (`mcugen report --trace FILE.json`).

The file is one JSON object, what a power monitor's acquisition holds (mcugen/link/power's
`PowerTrace` has the same fields):

    {"rate_hz": 100000, "amperes": [0.0123, ...], "marks": [1200, 5400], "volts": 3.3,
     "source": "LPM01A on /dev/ttyACM1"}

`rate_hz` (or `rate`) is samples per second; `amperes` (or `samples`) one current per sample
period, in amperes unless `unit` says "mA" or "uA"; `marks` sample indices of the timestamp
GPIO's falling edges (optional); `volts` the supply (optional: without it no energy is given).
Between marks 2k and 2k+1 lies window k, as MLPerf Tiny's energy mode times them. The file is
untrusted input: everything is checked, and a bad file is one error line naming it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcugen.errors import McugenError

UNITS = {"A": 1.0, "mA": 1e-3, "uA": 1e-6}
#: more samples than this are refused (a report, not an archive: ~80 MB of JSON)
MAX_SAMPLES = 10_000_000


@dataclass(frozen=True)
class CurrentTrace:
    rate_hz: float
    amperes: tuple[float, ...]
    marks: tuple[int, ...] = ()
    volts: float | None = None
    source: str = ""

    @property
    def seconds(self) -> float:
        return len(self.amperes) / self.rate_hz

    def windows(self) -> list[dict[str, Any]]:
        """Each pair of marks: its samples, duration, mean current and (with `volts`) energy."""
        found = []
        for start, end in zip(self.marks[::2], self.marks[1::2], strict=False):
            part = self.amperes[start:end]
            mean = sum(part) / len(part) if part else 0.0
            seconds = (end - start) / self.rate_hz
            uj = None if self.volts is None else mean * self.volts * seconds * 1e6
            found.append(
                {
                    "start": start,
                    "end": end,
                    "ms": round(seconds * 1e3, 3),
                    "mean_ma": round(mean * 1e3, 3),
                    "uj": None if uj is None else round(uj, 1),
                }
            )
        return found


def load_trace(path: Path) -> CurrentTrace:
    """The trace in `path`, checked; McugenError (one line naming the file) when it is bad."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise McugenError("trace file not found", where=str(path)) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise McugenError(
            f"cannot read the trace ({type(exc).__name__})",
            where=str(path),
            hint="give a JSON object with rate_hz, amperes and marks",
        ) from None
    try:
        return parse_trace(data, str(path))
    except ValueError as exc:
        raise McugenError(
            f"not a current trace: {exc}",
            where=str(path),
            hint="give a JSON object with rate_hz, amperes (or samples) and marks",
        ) from None


def parse_trace(data: Any, source: str = "") -> CurrentTrace:
    """A `CurrentTrace` from decoded JSON; ValueError saying what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("the file holds no JSON object")
    rate = _number(data.get("rate_hz", data.get("rate")), "rate_hz")
    if rate <= 0:
        raise ValueError("rate_hz must be positive")
    samples = data.get("amperes", data.get("samples"))
    if not isinstance(samples, list) or not samples or len(samples) > MAX_SAMPLES:
        raise ValueError(f"amperes must be a list of 1 to {MAX_SAMPLES:,} numbers")
    unit = data.get("unit", "A")
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}")
    scale = UNITS[unit]
    amperes = tuple(_number(v, "a sample") * scale for v in samples)
    marks = data.get("marks", [])
    if not isinstance(marks, list) or not all(
        isinstance(m, int) and not isinstance(m, bool) and 0 <= m <= len(amperes) for m in marks
    ):
        raise ValueError("marks must be sample indices within the trace")
    if marks != sorted(marks):
        raise ValueError("marks must be in increasing order")
    volts = data.get("volts")
    if volts is not None and _number(volts, "volts") <= 0:
        raise ValueError("volts must be positive")
    name = data.get("source", source)
    return CurrentTrace(
        rate,
        amperes,
        tuple(marks),
        None if volts is None else float(volts),
        name if isinstance(name, str) else source,
    )


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number")
    return float(value)
