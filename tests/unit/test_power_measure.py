"""`mcugen measure --power` end to end: the firmware is built for nucleo-f767, then a simulated
energy-mode MLPerf device (one pty) and a simulated power monitor (another pty) supplying it stand
in for the bench. Plus the command-line errors that come before any build."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from instruments import Bench, simulated_dut, simulated_lpm01a, simulated_ppk2
from mcugen import cli
from mcugen.commands import measure
from mcugen.errors import RunError
from mcugen.link.power import parse_power_spec
from mcugen.link.power.bench import EnergyRequest, run_energy
from mcugen.report.html.trace import load_trace
from support import EXAMPLE

BOARD = "nucleo-f767"
needs_arm_gcc = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc not installed"
)


def _not_compared(*_: object) -> dict[str, Any]:
    """The simulated device's results are not TFLM's: the comparison is tested elsewhere."""
    return {"tflm": None, "agree": None, "comparison_note": "not compared: simulated device"}


@needs_arm_gcc
@pytest.mark.parametrize("monitor", ["lpm01a", "ppk2"])
def test_measure_power_end_to_end(
    monitor: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(measure, "_tflm_comparison", _not_compared)
    bench = Bench()
    simulate = simulated_lpm01a if monitor == "lpm01a" else simulated_ppk2
    with simulate(bench) as sim, simulated_dut(bench) as dut:
        argv = ["measure", str(EXAMPLE), "--board", BOARD, "--port", dut.path]
        argv += ["--power", f"{monitor}:{sim.pty.path}", "--count", "3", "--warmup", "1"]
        if monitor == "ppk2":  # the text report (each run builds the firmware: once a monitor)
            assert cli.main(argv) == 0
            out = capsys.readouterr().out
            assert "uJ per inference, " in out and "standard deviation 0.000 uJ over 5" in out
            assert "15 inferences measured by Nordic PPK2 on /dev/pts/" in out
            return
        saved = tmp_path / "trace.json"
        assert cli.main([*argv, "--json", "--save-trace", str(saved)]) == 0
        report = json.loads(capsys.readouterr().out)
    energy = report["energy"]
    # the saved trace is what `mcugen report --trace` reads, with the same energy per window
    trace = load_trace(saved)
    assert len(trace.marks) == 10 and trace.volts == pytest.approx(3.3)
    first = trace.amperes[trace.marks[0] : trace.marks[1]]
    assert trace.volts is not None
    per_inference = sum(first) / trace.rate_hz * trace.volts * 1e6 / 3  # --count 3
    assert per_inference == pytest.approx(energy["windows"][0]["uj"], rel=1e-9)
    nominal = 20e-3 * 3.3 * 40 / 1000 * 1e6  # 20 mA for 40 ms at 3.3 V, per inference
    assert energy["count"] == 15 and len(energy["windows"]) == 5
    for k in range(5):
        assert energy["windows"][k]["uj"] == pytest.approx(bench.exact_uj(k, 3), rel=1e-12)
    assert energy["uj_per_inference"] == pytest.approx(nominal, rel=1e-12)
    assert report["timestamp_mode"] == "energy" and report["rounds"] == 5
    assert report["us_per_inference"] == pytest.approx(40e3)
    assert report["cycles_per_inference"] == 40e-3 * 216_000_000


def test_performance_firmware_is_one_clear_error() -> None:
    bench = Bench()
    with simulated_lpm01a(bench) as sim, simulated_dut(bench, mode="performance") as dut:
        spec = parse_power_spec(f"lpm01a:{sim.pty.path}")
        start = time.monotonic()
        with pytest.raises(RunError, match="m-timestamp-mode-performance.*needs energy mode"):
            run_energy(spec, dut.path, EnergyRequest(b"\0" * 4, "unknown", 2, 0))
        assert time.monotonic() - start < 5
        assert sim.commands[-2:] == ["pwr off", "hrc"]


def test_wrong_model_and_silent_board_are_clear_errors() -> None:
    bench = Bench()
    with simulated_lpm01a(bench) as sim, simulated_dut(bench, model_id="kws01") as dut:
        spec = parse_power_spec(f"lpm01a:{sim.pty.path}")
        request = EnergyRequest(b"\0" * 4, "vww01", 2, 0, boot_timeout=0.5)
        with pytest.raises(RunError, match="reports m-model-\\[kws01\\], this model is vww01"):
            run_energy(spec, dut.path, request)
    silent = Bench()
    with simulated_lpm01a(silent) as sim, simulated_dut(Bench()) as dut:  # never powered
        spec = parse_power_spec(f"lpm01a:{sim.pty.path}")
        request = EnergyRequest(b"\0" * 4, "unknown", 2, 0, boot_timeout=0.5)
        with pytest.raises(RunError, match="no boot banner from the board within 0 s"):
            run_energy(spec, dut.path, request)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--emulate", "--power", "lpm01a:/dev/ttyACM1"], "a power monitor measures a real board"),
        (["--port", "/dev/null", "--power", "joulescope:/dev/x"], "unknown power monitor"),
        (["--port", "/dev/null", "--power", "ppk2"], "--power ppk2 names no port"),
        (["--port", "/dev/null", "--power", "ppk2:/dev/nope"], "power monitor port not found"),
    ],
)
def test_power_option_errors(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["measure", str(EXAMPLE), "--board", BOARD, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
