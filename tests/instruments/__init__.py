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

from instruments.bench import Bench, Pty, running
from instruments.driving import acquire, read_through, released
from instruments.lpm01a import Lpm01aSim, lpm01a_line, simulated_lpm01a
from instruments.mlperf_dut import MlperfDutSim, simulated_dut
from instruments.ppk2 import (
    ADC_VOLTS_PER_COUNT,
    PPK2_CAL,
    PPK2_COMMAND_BYTES,
    PPK2_SHUNTS,
    Ppk2Sim,
    ppk2_code,
    ppk2_current,
    ppk2_metadata,
    simulated_ppk2,
)

__all__ = [
    "ADC_VOLTS_PER_COUNT",
    "PPK2_CAL",
    "PPK2_COMMAND_BYTES",
    "PPK2_SHUNTS",
    "Bench",
    "Lpm01aSim",
    "MlperfDutSim",
    "Ppk2Sim",
    "Pty",
    "acquire",
    "lpm01a_line",
    "ppk2_code",
    "ppk2_current",
    "ppk2_metadata",
    "read_through",
    "released",
    "running",
    "simulated_dut",
    "simulated_lpm01a",
    "simulated_ppk2",
]
