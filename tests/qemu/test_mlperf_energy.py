"""MLPerf Tiny energy mode on the emulated NUCLEO-F767ZI (`--mlperf-mode energy`): the banner, the
timestamps as falling edges of the twin's timestamp pin (FPGAIO LED0), seen from outside the
firmware in QEMU's trace of the register writes, with the virtual time of each edge from the
CMSDK timer value QEMU served right after it (-icount shift=0: 1 instruction = 1 ns, the timer
ticks at 25 MHz); results bit for bit those of performance mode."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import serial

from mcugen import cli
from mcugen.boards import CONSOLE_BAUD, Target, load_board, resolve_target, with_mlperf_mode
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.firmware.project import ENERGY_DEFINES, project_files
from mcugen.link.device_run import DeviceRun, open_console, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.link.mlperf import MlperfRunner, compare_results, dequantized
from mcugen.link.protocol import DeviceLink
from mcugen.link.qemu import listening_socket, qemu_command, qemu_console
from mcugen.model.ir import DTYPES
from mcugen.model.tflite_write import write_model
from mcugen.pipeline import Generated, generate_from_file
from mcugen.reference import tflm_outputs
from support import EXAMPLE, NEEDS_TWIN, int8_classifier

BOARD = "nucleo-f767"
#: QEMU trace events: the timestamp pin's register, the timer that times its hold, the console.
TRACE = ("mps2_fpgaio_write", "cmsdk_apb_timer_read", "cmsdk_apb_uart_write")
COUNT, WARMUP = 3, 2
#: The twin's timer (MCU_TIMER_BASE) counts down at the 25 MHz core clock: 40 ns a tick.
NS_PER_TICK = 40
HOLD_NS = 20_000  # MCU_PORT_TIMESTAMP_HOLD_US

_FPGAIO = re.compile(r"mps2_fpgaio_write .*offset 0x0 data (0x[0-9a-f]+)")
_TIMER = re.compile(r"cmsdk_apb_timer_read .*offset 0x4 data (0x[0-9a-f]+)")
_UART = re.compile(r"cmsdk_apb_uart_write .*offset 0x0 data (0x[0-9a-f]+)")


@dataclass
class Edge:
    falling: bool
    console_before: str  # what the firmware had written to its console before the edge
    timer: list[int] = field(default_factory=list)  # timer values read until the next edge


def parse_trace(log: str) -> tuple[list[Edge], str]:
    """The pin's edges in order (LED0 resets to 0, so the first write of 1 is a rising edge)
    and the console text, both from QEMU's trace."""
    edges: list[Edge] = []
    console: list[str] = []
    level = 0
    for line in log.splitlines():
        if m := _FPGAIO.search(line):
            new = int(m.group(1), 16) & 1
            if new != level:
                edges.append(Edge(falling=new == 0, console_before="".join(console)))
            level = new
        elif (m := _TIMER.search(line)) and edges:
            edges[-1].timer.append(int(m.group(1), 16))
        elif m := _UART.search(line):
            console.append(chr(int(m.group(1), 16)))
    return edges, "".join(console)


@dataclass(frozen=True)
class Session:
    mode: str
    timestamp: int | None
    lap_us: tuple[int, int] | None
    results: list[float]
    binary: DeviceRun
    trace: str


@dataclass(frozen=True)
class Builds:
    gen: Generated
    energy: Path
    performance: Path
    target: Target

    def sample(self) -> list[np.ndarray]:
        return random_inputs(self.gen.graph, 0)

    def run(self, elf: Path, workdir: Path) -> Session:
        """Boot, load, `timestamp`, `infer COUNT WARMUP`, `results`, then the binary protocol's
        raw output and instruction count on the same console; QEMU traces TRACE into a log."""
        log = workdir / f"{elf.parent.name}.trace"
        extra = [arg for event in TRACE for arg in ("-trace", event)] + ["-D", str(log)]
        t = self.gen.graph.tensors[self.gen.graph.inputs[0]]
        data = np.ascontiguousarray(self.sample()[0], dtype=DTYPES[t.dtype][0]).tobytes()
        with qemu_console(self.target.machine, elf, extra=extra) as port:
            runner = MlperfRunner(port, name="QEMU")
            mode = runner.boot()
            runner.load(data)
            stamp = runner.timestamp()
            timing = runner.infer(COUNT, WARMUP)
            results = runner.results()
            link = DeviceLink(port, name="QEMU")
            binary = run_samples(link, self.gen.graph, [self.sample()], emulated=True)
        return Session(mode, stamp, timing.lap_us, results, binary, log.read_text())


@pytest.fixture(scope="module")
def builds(workdir: Path) -> Builds:
    model = workdir / "int8_classifier.tflite"
    model.write_bytes(write_model(int8_classifier(seed=3, depth=64, hidden=48, classes=10)))
    gen = generate_from_file(model)
    target = resolve_target(load_board(BOARD), emulate=True)
    energy = build(gen, with_mlperf_mode(target, "energy"), workdir / "energy").executable
    performance = build(gen, target, workdir / "performance").executable
    return Builds(gen, energy, performance, target)


@NEEDS_TWIN
def test_energy_mode_marks_the_timed_loop(builds: Builds, workdir: Path) -> None:
    energy = builds.run(builds.energy, workdir)
    perf = builds.run(builds.performance, workdir)

    assert (energy.mode, perf.mode) == ("energy", "performance")
    edges, console = parse_trace(energy.trace)
    assert console.startswith("m-timestamp-mode-energy\r\nm-init-done\r\nm-ready\r\n")
    assert energy.timestamp is None and energy.lap_us is None and "m-lap-us" not in console

    # the pin idles high from boot; then one mark per `timestamp` and two around the timed loop
    falls = [e for e in edges if e.falling]
    assert [e.falling for e in edges] == [False] + [True, False] * 3
    assert edges[0].console_before == ""  # set up in mcu_port_init, before the banner
    assert len(falls) == 3
    # `timestamp%`: after the reply to loading, before its own m-ready
    assert falls[0].console_before.endswith("m-load-done\r\nm-ready\r\n")
    # `infer`: warm-ups before the first edge, nothing printed between the two, done after
    start, end = falls[1], falls[2]
    assert start.console_before.endswith(f"m-warmup-done\r\nm-infer-start-{COUNT}\r\n")
    assert end.console_before == start.console_before
    assert console[len(end.console_before) :].startswith("m-infer-done\r\n")

    # each edge held at least 20 us of virtual time (the timer counts down)
    for fall in falls:
        assert (fall.timer[0] - fall.timer[-1]) * NS_PER_TICK >= HOLD_NS
    # the virtual time between the two falling edges is the start's hold, then the COUNT
    # inferences performance mode times (its laps, in whole us, and the binary protocol's exact
    # count), then the loop's bookkeeping between inferences (restoring the input, restarting
    # the counter), which the laps leave out: under 1,000 instructions an inference
    window_ns = (start.timer[0] - end.timer[0]) * NS_PER_TICK
    loop_ns = window_ns - (start.timer[0] - start.timer[-1]) * NS_PER_TICK
    assert perf.lap_us is not None
    lap_ns = (perf.lap_us[1] - perf.lap_us[0]) * 1000
    exact_ns = COUNT * perf.binary.instructions(perf.binary.ticks_per_inference[0])
    assert exact_ns <= loop_ns <= exact_ns + COUNT * 1_000, (loop_ns, exact_ns)
    assert lap_ns - 1_000 <= loop_ns <= lap_ns + COUNT * 1_000 + 1_000, (loop_ns, lap_ns)

    # the same inference: results, raw outputs and instruction counts bit for bit
    assert energy.results == perf.results
    for a, b in zip(energy.binary.outputs[0], perf.binary.outputs[0], strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert energy.binary.ticks_per_inference == perf.binary.ticks_per_inference
    model = Path(builds.gen.source).read_bytes()
    reference = tflm_outputs(model, builds.gen.graph, [builds.sample()])[0][0]
    assert compare_results(energy.results, dequantized(builds.gen.graph, reference)).agree


@NEEDS_TWIN
def test_cli_measure_energy_mode(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["measure", str(EXAMPLE), "--board", BOARD, "--emulate", "--mlperf"]
    assert cli.main([*argv, "--mlperf-mode", "energy", "--count", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["timestamp_mode"] == "energy" and report["agree"] is True
    assert report["lap_us"] is None and report["us_per_inference"] is None
    assert "instructions_per_inference" not in report
    assert report["energy"] is None and "FPGAIO LED0" in report["energy_note"]
    assert cli.main([*argv[:-1], "--mlperf-mode", "energy"]) == 2
    assert "--mlperf-mode applies to --mlperf runs" in capsys.readouterr().err


@contextlib.contextmanager
def twin_on_a_socket(elf: Path) -> Iterator[str]:
    """The twin running `elf` with its console on a local socket, as a board on a port."""
    with listening_socket() as listener:
        proc = subprocess.Popen(
            qemu_command("mps2-an500", elf, listener.fileno()),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(listener.fileno(),),
        )
        url = f"socket://127.0.0.1:{listener.getsockname()[1]}"
    try:
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=5)


@NEEDS_TWIN
def test_cli_measure_energy_mode_on_a_port(
    builds: Builds, capsys: pytest.CaptureFixture[str]
) -> None:
    """--port (the banner passed before the host attached): the device's mode shows in its
    reply to `infer`; energy asked of performance firmware is an error naming the fix."""
    model = str(builds.gen.source)
    argv = ["measure", model, "--board", BOARD, "--mlperf", "--mlperf-mode", "energy"]
    with twin_on_a_socket(builds.energy) as url:
        assert cli.main([*argv, "--port", url, "--count", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["timestamp_mode"] == "energy" and report["agree"] is True
    assert report["lap_us"] is None and "PF13" in report["energy_note"]
    with twin_on_a_socket(builds.performance) as url:
        assert cli.main([*argv, "--port", url, "--count", "2"]) == 4
    err = capsys.readouterr().err
    assert "runs MLPerf Tiny's performance timestamp mode, this run asked for energy" in err
    assert f"mcugen flash {model} --board {BOARD} --mlperf-mode energy" in err


def test_energy_mode_needs_a_timestamp_pin(capsys: pytest.CaptureFixture[str]) -> None:
    # the L4R5ZI's twin (mps2-an386) has one, the board does not: its energy firmware would not
    # run on the board
    boards = (("nucleo-l4r5zi", False), ("nucleo-l4r5zi", True), ("host", False))
    for board, emulate in (*boards, ("netduinoplus2", False), ("disco-f746ng", True)):
        with pytest.raises(McugenError, match="has no timestamp pin"):
            with_mlperf_mode(resolve_target(load_board(board), emulate=emulate), "energy")
    argv = ["build", str(EXAMPLE), "--board", "nucleo-l4r5zi", "--mlperf-mode", "energy"]
    assert cli.main(argv) == 2
    assert "no timestamp pin for MLPerf Tiny energy mode" in capsys.readouterr().err


def test_energy_build_defines_and_baud() -> None:
    """Energy builds add the energy defines (9600 baud) to the Makefile and platformio.ini; a
    performance build's files do not change; a real port opens at the mode's baud rate."""
    gen = generate_from_file(EXAMPLE)
    board = resolve_target(load_board(BOARD), emulate=False)
    energy = with_mlperf_mode(board, "energy")
    perf_files = project_files(gen, board)
    energy_files = project_files(gen, energy)
    assert ENERGY_DEFINES == ("MCU_MLPERF_ENERGY", "MCU_CONSOLE_BAUD=9600u")
    for define in ENERGY_DEFINES:
        assert f"-D{define}".encode() in energy_files["Makefile"]
        assert f"-D{define}".encode() not in perf_files["Makefile"]
        assert f"-D{define}".encode() in energy_files["platformio.ini"]
    assert b"monitor_speed = 9600" in energy_files["platformio.ini"]
    assert b"monitor_speed = 115200" in perf_files["platformio.ini"]
    assert {k for k in perf_files if perf_files[k] != energy_files[k]} == {
        "Makefile",
        "platformio.ini",
    }
    for target, baud in ((board, 115200), (energy, 9600)):
        assert CONSOLE_BAUD[target.mlperf_mode] == baud
        with open_console(target, Path("unused.elf"), "loop://") as (ser, _):
            assert isinstance(ser, serial.SerialBase) and ser.baudrate == baud
