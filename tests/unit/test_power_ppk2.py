"""The Nordic PPK2 driver against a simulated PPK2 on a pseudo-terminal (tests/instruments/): the
command bytes, the calibration read from its metadata, the decoded current and D0 marks of a known
waveform, noise within its tolerance, and one clear RunError within a bounded time for each fault,
with the port closed."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from instruments import (
    PPK2_CAL,
    PPK2_SHUNTS,
    Bench,
    Ppk2Sim,
    read_through,
    released,
    simulated_ppk2,
)
from instruments import acquire as run_acquisition
from mcugen.errors import McugenError
from mcugen.link.power import energy_per_inference
from mcugen.link.power.ppk2 import Ppk2, parse_metadata, to_amperes
from mcugen.link.power.trace import PowerTrace
from support import one_line_error

BOUND_S = 5.0
N = 4
ROUNDS = 3
#: Largest step of the simulated ADC at 2 and 20 mA (ranges 1 and 2), amperes.
STEP_A = 4 * 1.8 / 163840 / min(PPK2_SHUNTS[1], PPK2_SHUNTS[2]) * 1.03


def acquire(bench: Bench, fault: str = "") -> tuple[PowerTrace, Ppk2Sim]:
    """ROUNDS rounds of N inferences (timeouts of 1 s for the faults, 3 s otherwise, so a loaded
    machine does not fail a good run); the port is released (instruments.acquire)."""
    with simulated_ppk2(bench, fault) as sim:
        trace, _ = run_acquisition(
            Ppk2(sim.pty.path, millivolts=3300, timeout=1.0 if fault else 3.0),
            sim,
            bench,
            ROUNDS,
            N,
        )
        if not fault:
            read_through(sim, b"\x0c\x00")  # supply off (CI once stopped the simulator first)
        return trace, sim


def test_command_bytes() -> None:
    _, sim = acquire(Bench())
    assert sim.commands == [
        b"\x19",  # metadata
        b"\x11\x02",  # source meter
        b"\x0d\x0c\xe4",  # 3300 mV = 0x0ce4
        b"\x0c\x01",  # supply on
        b"\x06",  # start
        b"\x07",  # stop
        b"\x0c\x00",  # supply off on leaving
    ]


def test_metadata_and_conversion() -> None:
    text = "Calibrated: 1\nR0: 1000\nR1: 0\nGI2: 1.5\nO3: nonsense\nUG4: 2\n"
    cal = parse_metadata(text)
    assert cal["R"][:2] == (1000.0, 101.65)  # a zero shunt keeps the default
    assert cal["GI"][2] == 1.5 and cal["O"][3] == 0.0 and cal["UG"][4] == 2.0
    # range 0, adc 1000: (4000 - 0) * 1.8 / 163840 / 1000 A; range bits above 4 read as 4
    words = np.array([1000, 1000 | 7 << 14], dtype=np.uint32)
    amperes = to_amperes(words, cal, 3.0)
    assert amperes[0] == pytest.approx(4000 * 1.8 / 163840 / 1000, rel=1e-12)
    assert amperes[1] == pytest.approx(2 * 4000 * 1.8 / 163840 / 0.043, rel=1e-12)


def test_known_waveform_exactly() -> None:
    bench = Bench()
    trace, _ = acquire(bench)
    assert trace.rate_hz == 100_000 and trace.volts == 3.3 and trace.mark_input == "D0"
    assert list(trace.marks) == bench.marks and len(trace.marks) == 2 * ROUNDS
    assert np.allclose(trace.amperes, bench.sent, rtol=1e-12, atol=0)
    result = energy_per_inference(trace, inferences=N, windows=ROUNDS)
    nominal = 20e-3 * 3.3 * 40 / 100_000 * 1e6  # 20 mA for 0.4 ms at 3.3 V: 26.4 uJ
    quantum = 3.3 * STEP_A / 2 * 40 / 100_000 * 1e6
    for k, window in enumerate(result.windows):
        assert window.energy_uj == pytest.approx(bench.exact_uj(k, N), rel=1e-12)
        assert abs(window.energy_uj - nominal) <= quantum
    assert PPK2_CAL["GI"][2] != 1  # the simulator's calibration is not the identity


def test_noisy_waveform_within_its_noise() -> None:
    """As for the LPM01A: 5 standard errors of the window's summed noise, plus the ADC's rounding
    (half a step per sample)."""
    sigma = 1e-3
    bench = Bench(noise_a=sigma, seed=3)
    result = energy_per_inference(acquire(bench)[0], inferences=N, windows=ROUNDS)
    samples = 40 * N
    noise_uj = 3.3 * sigma * math.sqrt(samples) / 100_000 / N * 1e6
    rounding_uj = 3.3 * STEP_A / 2 * samples / 100_000 / N * 1e6
    nominal = 20e-3 * 3.3 * 40 / 100_000 * 1e6
    for k, window in enumerate(result.windows):
        assert window.energy_uj == pytest.approx(bench.exact_uj(k, N), rel=1e-9)
        assert abs(window.energy_uj - nominal) < 5 * noise_uj + rounding_uj


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("silent", "no reply before the deadline to the metadata request"),
        ("drop", "sample counter broke after sample"),
        ("disconnect", "lost the link mid-acquisition"),
        ("stall", "no samples streamed between start and stop"),
    ],
)
def test_each_fault_is_one_clear_error_in_bounded_time(fault: str, message: str) -> None:
    line = one_line_error(lambda: acquire(Bench(), fault), BOUND_S)
    assert message in line
    assert line.startswith("/dev/pts/") and "PPK2" in line


def test_keyboard_interrupt_stops_powers_off_and_closes() -> None:
    with simulated_ppk2(Bench()) as sim:
        monitor = Ppk2(sim.pty.path, timeout=1.0)
        with pytest.raises(KeyboardInterrupt), monitor:
            monitor.power_on()
            monitor.start()
            raise KeyboardInterrupt
        released(monitor, sim)
        deadline = time.monotonic() + 2
        while sim.commands[-1:] != [b"\x0c\x00"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sim.commands[-2:] == [b"\x07", b"\x0c\x00"]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(McugenError, match="800 to 5000 mV"):
        Ppk2("/dev/null", millivolts=6000)
    with pytest.raises(ValueError, match="D0-D7"):
        Ppk2("/dev/null", logic_channel=8)
