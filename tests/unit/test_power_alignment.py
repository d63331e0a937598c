"""Energy per inference between MLPerf Tiny's GPIO marks, on synthetic numpy traces (no
instrument): the exact energy of a known waveform, the spread over rounds, and one clear error for
each way the marks can be wrong. Also the `--power NAME:PORT` parser."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError, RunError
from mcugen.link.power import POWER_MONITORS, parse_power_spec
from mcugen.link.power.trace import PowerTrace, energy_per_inference, falling_edges

RATE = 10_000.0
VOLTS = 1.8


def synthetic(rounds: list[tuple[int, float]], *, per_inference: int = 25) -> PowerTrace:
    """Idle 2 mA; each round (N, amperes) is N inferences of `per_inference` samples at that
    current between two marks, with 50 idle samples around it."""
    parts, marks, at = [], [], 0
    for n, amperes in rounds:
        idle = np.full(50, 2e-3)
        active = np.full(n * per_inference, amperes)
        marks += [at + 50, at + 50 + len(active)]
        parts += [idle, active]
        at += 50 + len(active)
    parts.append(np.full(50, 2e-3))
    return PowerTrace(RATE, np.concatenate(parts), VOLTS, tuple(marks), "test trace", "D7")


def test_known_waveform_gives_its_energy_exactly() -> None:
    result = energy_per_inference(synthetic([(4, 20e-3)] * 3), inferences=4, windows=3)
    expected_uj = 20e-3 * VOLTS * 25 / RATE * 1e6  # 20 mA for 2.5 ms at 1.8 V: 90 uJ
    assert result.count == 12 and len(result.windows) == 3
    assert result.mean_uj == pytest.approx(expected_uj, rel=1e-12)
    assert result.std_uj == pytest.approx(0.0, abs=1e-9)
    assert result.mean_s == pytest.approx(25 / RATE, rel=1e-12)
    report = result.as_dict()
    assert report["min_uj"] == pytest.approx(report["max_uj"], rel=1e-12)
    assert report["mw"] == pytest.approx(20e-3 * VOLTS * 1e3, rel=1e-12)


def test_spread_is_over_the_rounds() -> None:
    result = energy_per_inference(synthetic([(2, 10e-3), (2, 20e-3), (2, 30e-3)]), inferences=2)
    per_ma = VOLTS * 25 / RATE * 1e6 * 1e-3  # uJ per inference per mA
    assert result.min_uj == pytest.approx(10 * per_ma)
    assert result.max_uj == pytest.approx(30 * per_ma)
    assert result.mean_uj == pytest.approx(20 * per_ma)
    assert result.std_uj == pytest.approx(10 * per_ma)  # sample deviation of 10, 20, 30


def test_idle_outside_the_marks_is_not_counted() -> None:
    trace = synthetic([(1, 20e-3)])
    noisy = trace.amperes.copy()
    noisy[:50] = 1.0  # a huge current before the first mark
    moved = PowerTrace(RATE, noisy, VOLTS, trace.marks, "t")
    assert energy_per_inference(moved, inferences=1).mean_uj == pytest.approx(
        energy_per_inference(trace, inferences=1).mean_uj
    )


@pytest.mark.parametrize(
    ("marks", "windows", "message"),
    [
        ((), None, "no GPIO timestamp marks in 200 samples"),
        ((50, 100, 150), None, "3 GPIO timestamp marks: they come in pairs"),
        ((50, 100), 2, "2 GPIO timestamp marks for 2 infer commands (expected 4)"),
        ((50, 52), None, "inference window 1 spans 2 samples (200 us"),
        ((100, 50), None, "marks out of order"),
    ],
)
def test_bad_marks_are_one_clear_error(
    marks: tuple[int, ...], windows: int | None, message: str
) -> None:
    trace = PowerTrace(RATE, np.full(200, 2e-3), VOLTS, marks, "LPM01A on /dev/x", "D7")
    with pytest.raises(RunError) as caught:
        energy_per_inference(trace, inferences=1, windows=windows)
    assert message in caught.value.line()
    assert caught.value.line().startswith("LPM01A on /dev/x: ")


def test_no_marks_says_where_to_wire() -> None:
    trace = PowerTrace(RATE, np.full(10, 2e-3), VOLTS, (), "PPK2 on /dev/y", "D0")
    with pytest.raises(RunError, match="m-timestamp-mode-energy.*D0 input"):
        energy_per_inference(trace, inferences=1)


def test_falling_edges_need_the_hold() -> None:
    low = np.array([0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0], dtype=bool)
    assert falling_edges(low) == (2, 5, 8)
    assert falling_edges(low, min_low_samples=2) == (2, 8)
    assert falling_edges(low, min_low_samples=3) == (8,)
    assert falling_edges(np.ones(5, dtype=bool)) == ()


def test_power_spec() -> None:
    assert POWER_MONITORS.default == "lpm01a" and POWER_MONITORS.names() == ("lpm01a", "ppk2")
    spec = parse_power_spec("LPM01A:/dev/ttyACM1")
    assert (spec.name, spec.port) == ("lpm01a", "/dev/ttyACM1")
    assert parse_power_spec("ppk2:socket://host:1").port == "socket://host:1"
    with pytest.raises(
        McugenError, match="unknown power monitor 'joulescope'; choose one of: lpm01a, ppk2"
    ):
        parse_power_spec("joulescope:/dev/ttyACM1")
    for text in ("ppk2", "ppk2:", "ppk2: "):
        with pytest.raises(McugenError, match="names no port"):
            parse_power_spec(text)
