"""An MLPerf Tiny energy run on a real bench: a power monitor supplies the board and records its
current, the board runs the runner protocol (mcugen/link/mlperf.py) in energy mode.

The sequence, as EEMBC's EnergyRunner drives an energy-mode device (mlcommons/tiny):
1. the monitor configures itself and switches the board's supply on; the board boots and prints
   `m-timestamp-mode-energy`, `m-init-done`, `m-ready` (any other mode is an error: its
   timestamps would be text, not GPIO marks);
2. `name%`, `profile%` (the model id must be this model's), `db load`/`db` (the input);
3. the monitor starts streaming; `infer N W%` runs `rounds` times, each answered without
   `m-lap-us` lines (energy mode marks time with the GPIO, a pair of falling edges a round);
4. the monitor stops; `results%`; leaving the `with` switches the supply off.
The energy of each round between its two marks, divided by N, is the energy per inference.

In energy mode the runner's device talks at 9,600 baud (notes/protocols.md), so the console is
opened at that rate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mcugen.errors import RunError
from mcugen.link.mlperf import MlperfRunner, check_model_id, default_infer
from mcugen.link.power import PowerSpec, open_monitor
from mcugen.link.power.link import open_port
from mcugen.link.power.trace import EnergyResult, PowerTrace, energy_per_inference

#: The runner protocol's baud rate in energy mode.
ENERGY_BAUD = 9600
#: `infer N W` rounds per energy run: the spread is over these.
ENERGY_ROUNDS = 5
#: How long a board may take to print its banner once supplied.
BOOT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class EnergyRun:
    """What the device said and what the monitor measured."""

    dut: str
    profile: str
    model_id: str
    mode: str
    count: int
    warmup: int
    rounds: int
    results: list[float]
    energy: EnergyResult
    monitor: str  # e.g. "X-NUCLEO-LPM01A on /dev/ttyACM1"
    trace: PowerTrace | None = None  # the acquisition itself (`trace_json` writes it)


@dataclass(frozen=True)
class EnergyRequest:
    """The run asked for: the input bytes, this model's id, and counts (None: the runner's)."""

    data: bytes
    model_id: str
    count: int | None = None
    warmup: int | None = None
    rounds: int = ENERGY_ROUNDS
    millivolts: int = 3300
    boot_timeout: float = BOOT_TIMEOUT_S


def run_energy(spec: PowerSpec, dut_port: str, request: EnergyRequest) -> EnergyRun:
    """The energy run above; RunError (one line) for anything the bench gets wrong."""
    with (
        open_monitor(spec, millivolts=request.millivolts) as monitor,
        open_port(dut_port, ENERGY_BAUD, "board's console") as ser,
    ):
        runner = MlperfRunner(ser, name=dut_port)
        monitor.power_on()
        mode = _boot(runner, monitor.label, request.boot_timeout)
        dut = runner.name_dut()
        profile, model_id = runner.profile()
        check_model_id(
            model_id,
            request.model_id,
            dut_port,
            "write this model to the board first (mcugen flash)",
        )
        default = default_infer(model_id, emulated=False)
        count = request.count if request.count is not None else default[0]
        warmup = request.warmup if request.warmup is not None else default[1]
        runner.load(request.data)
        monitor.start()
        for _ in range(request.rounds):
            _infer(runner, count, warmup)
        trace = monitor.stop()
        values = runner.results()
    energy = energy_per_inference(trace, inferences=count, windows=request.rounds)
    return EnergyRun(
        dut,
        profile,
        model_id,
        mode,
        count,
        warmup,
        request.rounds,
        values,
        energy,
        trace.source,
        trace,
    )


def trace_json(trace: PowerTrace) -> bytes:
    """The acquisition as `mcugen report --trace` reads it (mcugen/report/html/trace.py)."""
    data = {
        "rate_hz": trace.rate_hz,
        "amperes": [float(a) for a in trace.amperes],
        "marks": list(trace.marks),
        "volts": trace.volts,
        "source": trace.source,
    }
    return json.dumps(data).encode()


def _boot(runner: MlperfRunner, monitor: str, timeout: float) -> str:
    """The timestamp mode of the banner the board prints once supplied; it must be energy."""
    try:
        mode = runner.boot(timeout=timeout)
    except RunError:
        raise RunError(
            f"no boot banner from the board within {timeout:.0f} s of {monitor} switching its "
            "supply on",
            where=runner.name,
            hint="supply the board through the monitor (its own supply jumper open) and check "
            "that --port is the board's console",
        ) from None
    if mode != "energy":
        raise RunError(
            f"the firmware runs in {mode or 'an unknown'} timestamp mode "
            f"(m-timestamp-mode-{mode or '?'}): a power monitor needs energy mode, whose "
            "timestamps are GPIO marks",
            where=runner.name,
            hint="build and flash the firmware in energy mode",
        )
    return mode


def _infer(runner: MlperfRunner, count: int, warmup: int) -> None:
    """`infer N W%` in energy mode: no m-lap-us lines, but m-infer-done."""
    lines = runner.command(f"infer {count} {warmup}", timeout=runner.infer_timeout)
    if "m-infer-done" not in lines:
        raise RunError(
            f"expected m-infer-done after 'infer {count} {warmup}%', got {lines[:6]}",
            where=runner.name,
        )
