"""The MLPerf Tiny (EEMBC EnergyRunner) runner exchange against the emulated NUCLEO-F767ZI: name,
profile, db load, db, infer, results, checked against TFLM to three decimals; the device's error
replies; a dead or silent link; `mcugen measure` on the command line."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import serial

from mcugen import cli
from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import RunError
from mcugen.firmware.compile import build
from mcugen.firmware.sizes import symbol_sizes
from mcugen.link.device_run import QEMU_INSTRUCTIONS_PER_SECOND, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.link.mlperf import DB_BYTES_PER_LINE, MlperfRunner, compare_results, dequantized
from mcugen.link.protocol import DeviceLink
from mcugen.link.qemu import listening_socket, qemu_command, qemu_console
from mcugen.model.ir import DTYPES
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate_from_file
from mcugen.reference import tflm_outputs
from support import EXAMPLE, NEEDS_TWIN, SHARED_MODELS

KWS = SHARED_MODELS / "mlperf_kws_dscnn_int8.tflite"
BOARD = "nucleo-f767"
PROFILE = "ULPMark for tinyML Firmware V0.0.1"
MODELS = [
    pytest.param(EXAMPLE, "unknown", id="tiny_cnn"),
    pytest.param(
        KWS,
        "kws01",
        id="kws",
        marks=[
            pytest.mark.models,
            pytest.mark.skipif(not KWS.exists(), reason="../shared/models is absent"),
        ],
    ),
]


@dataclass(frozen=True)
class Firmware:
    gen: Generated
    target: Target
    elf: Path

    def sample(self, seed: int = 0) -> list[np.ndarray]:
        return random_inputs(self.gen.graph, seed)

    def input_bytes(self, seed: int = 0) -> bytes:
        t = self.gen.graph.tensors[self.gen.graph.inputs[0]]
        return np.ascontiguousarray(self.sample(seed)[0], dtype=DTYPES[t.dtype][0]).tobytes()

    def tflm_dequantized(self, seed: int = 0) -> np.ndarray:
        model = Path(self.gen.source).read_bytes()
        out = tflm_outputs(model, self.gen.graph, [self.sample(seed)])[0][0]
        return dequantized(self.gen.graph, out)


#: Keyed by workdir too: pytest-xdist may run other modules' tests between two of this module's on
#: one worker, which tears `workdir` down and makes a new one; a firmware there would be gone.
_BUILT: dict[tuple[Path, Path, str], Firmware] = {}


def firmware_for(model: Path, workdir: Path, keep_input: str = "auto") -> Firmware:
    """The firmware `mcugen build` makes (the input kept in the arena when that saves RAM), or
    with `keep_input` "yes" / "no" either way of loading the sample."""
    if (workdir, model, keep_input) not in _BUILT:
        gen = generate_from_file(model, PlanOptions(keep_input=keep_input))
        target = resolve_target(load_board(BOARD), emulate=True)
        result = build(gen, target, workdir / f"{model.stem}-{keep_input}")
        _BUILT[workdir, model, keep_input] = Firmware(gen, target, result.executable)
    return _BUILT[workdir, model, keep_input]


@pytest.fixture
def tiny(workdir: Path) -> Firmware:
    return firmware_for(EXAMPLE, workdir)


class RecordingPort:
    """Passes everything to the real port and keeps what the host wrote."""

    def __init__(self, port: serial.SerialBase) -> None:
        self._port = port
        self.written = bytearray()

    def write(self, data: bytes) -> int | None:
        self.written += data
        return self._port.write(data)

    def __getattr__(self, name: str) -> object:
        return getattr(self._port, name)


# --- the full exchange ---------------------------------------------------------------------


@NEEDS_TWIN
@pytest.mark.parametrize(("model", "model_id"), MODELS)
def test_runner_exchange_agrees_with_tflm(model: Path, model_id: str, workdir: Path) -> None:
    fw = firmware_for(model, workdir)
    data = fw.input_bytes()
    with qemu_console(fw.target.machine, fw.elf) as port:
        recorder = RecordingPort(port)
        runner = MlperfRunner(recorder, name="QEMU")  # type: ignore[arg-type]
        assert runner.boot() == "performance"
        assert runner.name_dut() == "mcugen"
        assert runner.profile() == (PROFILE, model_id)
        runner.load(data)
        timing = runner.infer(3, 1)
        results = runner.results()
        # the same console also speaks mcugen's binary protocol: its count is the reference
        binary = run_samples(
            DeviceLink(port, name="QEMU"), fw.gen.graph, [fw.sample()], emulated=True
        )
    db_lines = [c for c in recorder.written.decode().split("%") if c.startswith("db ")][1:]
    assert len(db_lines) == -(-len(data) // DB_BYTES_PER_LINE)
    assert all(len(c) == 3 + 2 * DB_BYTES_PER_LINE for c in db_lines[:-1])
    assert bytes.fromhex("".join(c[3:] for c in db_lines)) == data

    agreement = compare_results(results, fw.tflm_dequantized())
    assert agreement.agree, (results, agreement)

    # laps are whole microseconds of virtual time (1000 instructions): within 1 us per run
    exact = binary.instructions(binary.ticks_per_inference[0])
    from_laps = timing.us_per_inference * QEMU_INSTRUCTIONS_PER_SECOND / 1e6
    assert timing.count == 3 and timing.warmup == 1
    assert abs(from_laps - exact) <= 1000, (from_laps, exact)


@NEEDS_TWIN
@pytest.mark.parametrize("keep_input", ["yes", "no"])
def test_every_inference_uses_the_loaded_sample(keep_input: str, workdir: Path) -> None:
    """Kept: `db` writes into the input tensor, which no operator overwrites, and there is no
    database buffer. Not kept: the arena reuses the input's bytes, so the device copies the
    database into them before each inference."""
    tiny = firmware_for(EXAMPLE, workdir, keep_input)
    assert tiny.gen.plan.input_kept == (keep_input == "yes")
    assert ("g_db" in symbol_sizes(tiny.elf, tiny.target)) == (keep_input == "no")
    with qemu_console(tiny.target.machine, tiny.elf) as port:
        runner = MlperfRunner(port, name="QEMU")
        runner.boot()
        runner.load(tiny.input_bytes(seed=3))
        runner.infer(4, 2)
        assert compare_results(runner.results(), tiny.tflm_dequantized(seed=3)).agree
        runner.load(tiny.input_bytes(seed=4))
        runner.infer(1, 0)
        assert compare_results(runner.results(), tiny.tflm_dequantized(seed=4)).agree


# --- error replies ---------------------------------------------------------------------------


def _input_size(fw: Firmware) -> int:
    return fw.gen.graph.tensors[fw.gen.graph.inputs[0]].nbytes


ERRORS = [
    (["db load 5"], r"e-\[Model input is (\d+) bytes\]"),
    (["db load"], r"e-\[Command 'db load' requires the # of bytes\]"),
    (["db load {n}", "db 00zz11"], r"e-\[Invalid hex digit 'zz'\]"),
    (["db load {n}", "db 0g"], r"e-\[Invalid hex digit '0g'\]"),
    (["db load {n}", "db 123"], r"e-\[Insufficient number of hex digits\]"),
    (["db 0011"], r"e-\[Too many bytes: use 'db load N' first\]"),
    (["infer"], r"e-\[Command 'infer' requires the # of inferences\]"),
    (["frobnicate 3"], r"e-\[Unknown command: frobnicate 3\]"),
]


@NEEDS_TWIN
@pytest.mark.parametrize(("commands", "error"), ERRORS, ids=[e[1][3:20] for e in ERRORS])
def test_error_reply_then_still_responsive(commands: list[str], error: str, tiny: Firmware) -> None:
    n = _input_size(tiny)
    with qemu_console(tiny.target.machine, tiny.elf) as port:
        runner = MlperfRunner(port, name="QEMU")
        runner.boot()
        for text in commands[:-1]:
            runner.command(text.format(n=n))
        with pytest.raises(RunError, match=error) as caught:
            runner.command(commands[-1].format(n=n))
        if "Model input is" in error:
            assert f"is {n} bytes" in str(caught.value)
        # the error ended with m-ready: the next exchange works, on the right input
        assert runner.name_dut() == "mcugen"
        runner.load(tiny.input_bytes())
        runner.infer(1, 0)
        assert compare_results(runner.results(), tiny.tflm_dequantized()).agree


@NEEDS_TWIN
def test_overlong_command_is_rejected_whole(tiny: Firmware) -> None:
    with qemu_console(tiny.target.machine, tiny.elf) as port:
        runner = MlperfRunner(port, name="QEMU")
        runner.boot()
        port.write(b"name" + b"x" * 100 + b"%")
        assert runner.wait_ready() == ["e-[Command too long]"]
        assert runner.name_dut() == "mcugen"
        with pytest.raises(ValueError):
            runner.command("y" * 81)


# --- a dead or silent link -------------------------------------------------------------------


class SilentPort:
    in_waiting = 0

    def read(self, size: int = 1) -> bytes:
        return b""

    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass


class DeadPort(SilentPort):
    def read(self, size: int = 1) -> bytes:
        raise serial.SerialException("device reports readiness to read but returned no data")


def test_silent_device_is_an_error_not_a_hang() -> None:
    runner = MlperfRunner(SilentPort(), name="/dev/ttyACM7", timeout=0.2)  # type: ignore[arg-type]
    with pytest.raises(RunError, match=r"^/dev/ttyACM7: no reply from the device"):
        runner.name_dut()


def test_lost_link_names_the_port() -> None:
    runner = MlperfRunner(DeadPort(), name="/dev/ttyACM7")  # type: ignore[arg-type]
    with pytest.raises(RunError, match=r"^/dev/ttyACM7: lost the link to the device"):
        runner.boot()


@NEEDS_TWIN
def test_qemu_gone_is_a_run_error(tiny: Firmware) -> None:
    with qemu_console(tiny.target.machine, tiny.elf) as port:
        runner = MlperfRunner(port, name="QEMU mps2-an500", timeout=5)
        runner.boot()
        port.close()
        with pytest.raises(RunError, match="QEMU mps2-an500: lost the link"):
            runner.name_dut()


# --- comparison to three decimals ------------------------------------------------------------


def test_compare_results_to_three_decimals() -> None:
    ref = np.array([0.0125, 0.99949, -0.5, 3.0])
    assert compare_results([0.013, 0.999, -0.5, 3.0], ref).agree
    assert compare_results([0.012, 0.999, -0.5, 3.0], ref).agree  # float32 rounding at the tie
    off = compare_results([0.013, 0.998, -0.5, 3.0], ref)
    assert not off.agree and off.first_difference == 1
    assert not compare_results([0.013, 0.999, -0.5], ref).agree
    assert compare_results([float("nan")], np.array([np.nan])).agree


# --- the command line ------------------------------------------------------------------------


@NEEDS_TWIN
def test_cli_measure_mlperf(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["measure", str(EXAMPLE), "--board", BOARD, "--emulate", "--mlperf"]
    assert cli.main([*argv, "--count", "2", "--warmup", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["protocol"] == "mlperf-tiny"
    assert report["agree"] is True
    assert (report["count"], report["warmup"]) == (2, 1)
    # more instructions than the example's 123,040 multiply-accumulates
    assert report["instructions_per_inference"] > 123_040
    assert report["energy"] is None and "power monitor" in report["energy_note"]
    # the board's energy model turns the twin's instructions into an estimate (mcugen/energy.py)
    model = load_board(BOARD).energy
    assert model is not None
    expected = model.estimate(report["instructions_per_inference"], load_board(BOARD).clock_hz)
    assert report["estimate"]["uj"] == pytest.approx(expected.uj, abs=0.05)

    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "results agree with TFLM to 3 decimals" in out
    assert "instructions" in out and "energy: not measured" in out
    assert f"ESTIMATE for {BOARD}" in out and "not a measurement" in out


@NEEDS_TWIN
def test_cli_measure_profile(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["measure", str(EXAMPLE), "--board", BOARD, "--emulate", "--json"]
    assert cli.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["protocol"] == "mcugen" and report["unit"] == "instructions"
    assert sum(row["instructions"] for row in report["per_operator"]) <= report["per_inference"]
    assert 0 < report["stack_used"] <= report["stack_bytes"]
    assert report["energy"] is None
    # per-operator estimates add up to at most the whole inference's
    total = sum(row["estimate_uj"] for row in report["per_operator"])
    assert 0 < total <= report["estimate"]["uj"] + 0.01 * len(report["per_operator"])


def _wait_listening(tcp_port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", tcp_port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@NEEDS_TWIN
def test_cli_measure_mlperf_on_a_port(tiny: Firmware, capsys: pytest.CaptureFixture[str]) -> None:
    """The --port path (a board that booted before the host attached): here the twin's console
    on a socket stands in for /dev/ttyACM0."""
    with listening_socket() as listener:
        tcp_port = listener.getsockname()[1]
        proc = subprocess.Popen(
            qemu_command(tiny.target.machine, tiny.elf, listener.fileno()),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(listener.fileno(),),
        )
    try:
        _wait_listening(tcp_port)  # this first connection starts the guest, like a board's reset
        url = f"socket://127.0.0.1:{tcp_port}"
        argv = ["measure", str(EXAMPLE), "--board", BOARD, "--port", url, "--mlperf"]
        assert cli.main([*argv, "--count", "2", "--warmup", "0", "--json"]) == 0
    finally:
        proc.kill()
        proc.wait(timeout=5)
    report = json.loads(capsys.readouterr().out)
    assert report["emulated"] is False and report["agree"] is True
    assert report["cycles_per_inference"] > 0


def test_cli_measure_needs_a_place_and_a_board(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["measure", str(EXAMPLE), "--board", BOARD, "--mlperf"]) == 2
    assert "say where nucleo-f767 runs" in capsys.readouterr().err
    assert cli.main(["measure", str(EXAMPLE), "--board", "host"]) == 2
    assert "needs a Cortex-M board" in capsys.readouterr().err
    argv = ["measure", str(EXAMPLE), "--board", BOARD, "--emulate", "--count", "3"]
    assert cli.main(argv) == 2
    assert "apply to --mlperf" in capsys.readouterr().err
