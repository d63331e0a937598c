"""The X-NUCLEO-LPM01A driver against a simulated LPM01A on a pseudo-terminal (tests/instruments):
the set-up it sends, the exact energy of a known waveform, a noisy one within the tolerance its
noise gives, and one clear RunError within a bounded time for each fault, with the port closed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from instruments import Bench, Lpm01aSim, read_through, released, simulated_lpm01a
from instruments import acquire as run_acquisition
from mcugen.errors import McugenError, RunError
from mcugen.link.power import energy_per_inference
from mcugen.link.power.lpm01a import Lpm01a
from mcugen.link.power.trace import PowerTrace
from support import one_line_error

#: A fault must surface within this (the driver's timeouts are 1 s here).
BOUND_S = 5.0
N = 5  # inferences per round
ROUNDS = 3
SETUP = [
    "htc",
    "pwr off",
    "acqtime inf",
    "trigsrc sw",
    "eventsrc d7 fal",
    "output current",
    "format ascii_dec",
    "freq 1k",
    "volt 3300m",
    "pwr on",
]


def acquire(bench: Bench, fault: str = "") -> tuple[PowerTrace, Lpm01aSim]:
    """ROUNDS rounds of N inferences (timeouts of 1 s for the faults, 3 s otherwise, so a loaded
    machine does not fail a good run); the port is released (instruments.acquire)."""
    with simulated_lpm01a(bench, fault) as sim:
        trace, _ = run_acquisition(
            Lpm01a(sim.pty.path, timeout=1.0 if fault else 3.0), sim, bench, ROUNDS, N
        )
        if not fault:
            read_through(sim, "hrc")  # its last command, read before the simulator stops
        return trace, sim


def test_setup_and_teardown_commands() -> None:
    _, sim = acquire(Bench())
    assert sim.commands == [*SETUP, "start", "stop", "pwr off", "hrc"]


def test_known_waveform_exactly() -> None:
    bench = Bench()
    trace, _ = acquire(bench)
    assert trace.rate_hz == 1000 and trace.volts == 3.3 and trace.mark_input == "D7"
    assert list(trace.marks) == bench.marks and len(trace.marks) == 2 * ROUNDS
    assert np.array_equal(trace.amperes, np.array(bench.sent))
    assert trace.checkpoints[0] == (0, 0.0)
    result = energy_per_inference(trace, inferences=N, windows=ROUNDS)
    nominal = 20e-3 * 3.3 * 40 / 1000 * 1e6  # 20 mA for 40 ms at 3.3 V: 2,640 uJ
    for k, window in enumerate(result.windows):
        assert window.energy_uj == pytest.approx(bench.exact_uj(k, N), rel=1e-12)
        assert window.energy_uj == pytest.approx(nominal, rel=1e-12)
    assert result.count == N * ROUNDS and result.std_uj == pytest.approx(0, abs=1e-9)


def test_noisy_waveform_within_its_noise() -> None:
    """Each window sums N*40 samples of noise sigma: its energy per inference is off by a normal
    error of V*sigma*sqrt(40N)/rate/N; 5 of those plus the worst rounding of a 4-digit mantissa
    (half a unit of 1e-5 A at 20 mA) bound it."""
    sigma = 1e-3
    bench = Bench(noise_a=sigma, seed=7)
    result = energy_per_inference(acquire(bench)[0], inferences=N, windows=ROUNDS)
    samples = 40 * N
    noise_uj = 3.3 * sigma * math.sqrt(samples) / 1000 / N * 1e6
    rounding_uj = 3.3 * 0.5e-5 * samples / 1000 / N * 1e6
    nominal = 20e-3 * 3.3 * 40 / 1000 * 1e6
    for k, window in enumerate(result.windows):
        assert window.energy_uj == pytest.approx(bench.exact_uj(k, N), rel=1e-12)
        assert abs(window.energy_uj - nominal) < 5 * noise_uj + rounding_uj
    assert result.std_uj > 0


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("error", "X-NUCLEO-LPM01A refused 'volt 3300m': voltage out of range"),
        ("silent", "no reply before the deadline to 'htc'"),
        ("garble", "unreadable line '20-05' after"),
        ("disconnect", "lost the link mid-acquisition"),
        ("stall", "no 'Acquisition completed' within 1 s of 'stop'"),
    ],
)
def test_each_fault_is_one_clear_error_in_bounded_time(fault: str, message: str) -> None:
    line = one_line_error(lambda: acquire(Bench(), fault), BOUND_S)
    assert message in line
    assert line.startswith("/dev/pts/")


def test_keyboard_interrupt_powers_off_and_closes() -> None:
    with simulated_lpm01a(Bench()) as sim:
        monitor = Lpm01a(sim.pty.path, timeout=1.0)
        with pytest.raises(KeyboardInterrupt), monitor:
            monitor.power_on()
            monitor.start()
            raise KeyboardInterrupt
        released(monitor, sim)
        assert sim.commands[-2:] == ["pwr off", "hrc"]


def test_supply_out_of_range_is_refused() -> None:
    with pytest.raises(McugenError, match="1800 to 3300 mV, not 5000"):
        Lpm01a("/dev/null", millivolts=5000)


def test_missing_port_is_one_clear_error() -> None:
    with pytest.raises(RunError, match="cannot open the X-NUCLEO-LPM01A"), Lpm01a("/dev/nope"):
        pass
