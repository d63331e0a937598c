"""Host side of the MLPerf Tiny (EEMBC EnergyRunner) device-under-test protocol over pyserial.

The runner sends text commands ending in `%` (at most 80 characters); the device answers with
`m-...` lines, `e-[...]` error lines, and ends every command with `m-ready`. The sequence the
EnergyRunner uses in performance mode, which `MlperfRunner` reproduces:

    (boot) m-timestamp-mode-performance, m-init-done, m-ready
    name%               -> m-name-dut-[<vendor>]
    profile%            -> m-profile-[...], m-model-[kws01|vww01|ic01|ad01|strww01]
    db load <N>%        -> m-[Expecting N bytes]
    db <hex>%  (x k)    -> 31 bytes a line; the last one -> m-load-done
    infer <N> <W>%      -> m-warmup-start-W, m-warmup-done, m-infer-start-N, m-lap-us-<t0>,
                           m-lap-us-<t1>, m-infer-done
    results%            -> m-results-[<v0>,<v1>,...]  (three decimals)

In energy mode (banner m-timestamp-mode-energy; `mcugen build --mlperf-mode energy`) the device
talks at 9600 baud (`boards.CONSOLE_BAUD`, which `device_run.open_console` uses for a real port)
and its timestamps are falling edges of its timestamp pin, recorded by the power monitor, not
m-lap-us lines: `infer` then answers without them and `timestamp%` with nothing. The runner takes
the mode from the banner, or, after `resync` on a board that booted before the port was opened,
from whether `infer` printed laps. EEMBC's own runner reaches an energy-mode DUT through its IO
manager (`io dut <command>%`); this runner talks to the DUT's UART directly.

Every read has a deadline: a silent or dead link is a `RunError` naming the port, never a hang. An
`e-[...]` reply becomes a `RunError` quoting it, raised only after the command's `m-ready`, so the
link stays in step and usable.

Also here: how many inferences the runner's scripts time (`RUNNER_INFER`), and how the device's
three-decimal results are compared with a reference (`compare_results`, `dequantized`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np
import serial

from mcugen.errors import RunError
from mcugen.model.ir import DTYPES, Graph

#: Bytes of input data per `db` line, as the EnergyRunner sends them.
DB_BYTES_PER_LINE = 31
#: Longest command the device accepts, without the `%`.
MAX_COMMAND = 80
#: A reply line longer than this means the link carries garbage.
MAX_LINE_BYTES = 1 << 20

_RESULTS = re.compile(r"m-results-\[(.*)\]")
_MODEL = re.compile(r"m-model-\[(.*)\]")
_NAME = re.compile(r"m-name-dut-\[(.*)\]")
_PROFILE = re.compile(r"m-profile-\[(.*)\]")
_LAP = re.compile(r"m-lap-us-(\d+)")

#: `infer N W` in the MLPerf Tiny runner's test scripts, per benchmark.
RUNNER_INFER = {"ic01": (20, 5), "vww01": (20, 5), "kws01": (70, 10), "ad01": (1500, 10)}
#: Any other model on a board.
DEFAULT_INFER = (10, 1)
#: Under QEMU -icount every inference executes the same instructions: a few suffice.
EMULATED_INFER = (3, 1)
#: The device prints results with three decimals, rounded half away from zero.
RESULT_DECIMALS = 3


@dataclass(frozen=True)
class InferTiming:
    """The two timestamps the device took around `count` inferences (after `warmup` more); None
    in energy mode, where they were edges of the timestamp pin."""

    count: int
    warmup: int
    lap_us: tuple[int, int] | None

    @property
    def total_us(self) -> int:
        if self.lap_us is None:
            raise ValueError("energy mode: the timestamps were edges of the timestamp pin")
        return self.lap_us[1] - self.lap_us[0]

    @property
    def us_per_inference(self) -> float:
        return self.total_us / self.count


class MlperfRunner:
    """The runner's side of the protocol over any pyserial object (a port, or QEMU's socket)."""

    def __init__(
        self,
        port: serial.SerialBase,
        *,
        name: str,
        timeout: float = 10.0,
        infer_timeout: float = 600.0,
    ) -> None:
        self.port = port
        self.name = name
        self.timeout = timeout
        self.infer_timeout = infer_timeout
        self.mode = ""  # m-timestamp-mode-<mode> seen at boot
        self._buffer = bytearray()

    # --- lines ---------------------------------------------------------------------------------

    def _fail(self, what: str) -> RunError:
        return RunError(
            what, where=self.name, hint="check the port, the cable and that the firmware is running"
        )

    def read_line(self, deadline: float) -> str:
        """The next line without its `\\r\\n`; RunError when `deadline` (monotonic) passes."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                raw = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return raw.decode("ascii", errors="replace").strip("\r ")
            if len(self._buffer) > MAX_LINE_BYTES:
                raise self._fail(f"no line end in {MAX_LINE_BYTES} bytes from the device")
            if time.monotonic() > deadline:
                raise self._fail("no reply from the device before the deadline")
            try:
                chunk = self.port.read(max(1, self.port.in_waiting))
            except (serial.SerialException, OSError) as exc:
                raise self._fail(f"lost the link to the device ({exc})") from None
            self._buffer += chunk

    def wait_ready(self, *, timeout: float | None = None) -> list[str]:
        """Lines up to the next `m-ready` (not included)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        lines: list[str] = []
        while True:
            line = self.read_line(deadline)
            if line == "m-ready":
                return lines
            if line:
                lines.append(line)

    def command(self, text: str, *, timeout: float | None = None) -> list[str]:
        """Send `text%`, return the reply lines before `m-ready`; an `e-[...]` line is an error."""
        if len(text) > MAX_COMMAND or "%" in text:
            raise ValueError(f"not an MLPerf Tiny command: {text!r}")
        try:
            self.port.write(text.encode("ascii") + b"%")
            self.port.flush()
        except (serial.SerialException, OSError) as exc:
            raise self._fail(f"lost the link to the device ({exc})") from None
        lines = self.wait_ready(timeout=timeout)
        errors = [line for line in lines if line.startswith("e-")]
        if errors:
            shown = text if len(text) <= 24 else text[:21] + "..."
            raise RunError(f"the device answered '{shown}%' with {errors[0]}", where=self.name)
        return lines

    def _expect(self, lines: list[str], pattern: re.Pattern[str], text: str) -> str:
        """Group 1 of the first line matching `pattern` in the reply to `text%`."""
        for line in lines:
            match = pattern.fullmatch(line)
            if match:
                return match.group(1)
        raise RunError(
            f"unexpected reply to '{text}%': {lines[:4]} (expected a line like {pattern.pattern})",
            where=self.name,
        )

    # --- the runner's commands -------------------------------------------------------------------

    def boot(self, *, timeout: float | None = None) -> str:
        """Wait for the boot banner's `m-ready`; returns the timestamp mode (`performance`)."""
        for line in self.wait_ready(timeout=timeout):
            if line.startswith("m-timestamp-mode-"):
                self.mode = line[len("m-timestamp-mode-") :]
        return self.mode

    def resync(self) -> None:
        """For a board that booted before the port was opened: end any half-typed command,
        drop what is buffered, and check the device answers `name%`."""
        try:
            self.port.write(b"%")
            self.port.flush()
            time.sleep(0.3)
            self.port.reset_input_buffer()
        except (serial.SerialException, OSError) as exc:
            raise self._fail(f"lost the link to the device ({exc})") from None
        self._buffer.clear()
        self.name_dut()

    def name_dut(self) -> str:
        return self._expect(self.command("name"), _NAME, "name")

    def profile(self) -> tuple[str, str]:
        """(profile, model id), e.g. ("ULPMark for tinyML Firmware V0.0.1", "kws01")."""
        lines = self.command("profile")
        return self._expect(lines, _PROFILE, "profile"), self._expect(lines, _MODEL, "profile")

    def load(self, data: bytes) -> None:
        """`db load N`, then the bytes as hex, DB_BYTES_PER_LINE a line, until `m-load-done`."""
        self.command(f"db load {len(data)}")
        done = False
        for offset in range(0, len(data), DB_BYTES_PER_LINE):
            lines = self.command("db " + data[offset : offset + DB_BYTES_PER_LINE].hex())
            done = "m-load-done" in lines
        if not done:
            raise RunError(
                f"the device did not confirm loading {len(data)} bytes (no m-load-done)",
                where=self.name,
            )

    def infer(self, count: int, warmup: int) -> InferTiming:
        """`infer N W`: two m-lap-us lines in performance mode, none in energy mode (the mode
        not known yet: whichever the device printed, and the mode is then known)."""
        lines = self.command(f"infer {count} {warmup}", timeout=self.infer_timeout)
        laps = [int(m.group(1)) for m in map(_LAP.fullmatch, lines) if m]
        expected = {"performance": [2], "energy": [0]}.get(self.mode, [2, 0])
        if len(laps) not in expected or "m-infer-done" not in lines:
            what = " or ".join(str(n) for n in expected)
            raise RunError(
                f"expected {what} m-lap-us lines and m-infer-done after 'infer {count} "
                f"{warmup}%' (timestamp mode {self.mode or 'unknown'}), got {lines}",
                where=self.name,
            )
        if not laps:
            self.mode = "energy"
            return InferTiming(count, warmup, None)
        self.mode = "performance"
        return InferTiming(count, warmup, (laps[0], laps[1]))

    def timestamp(self) -> int | None:
        """`timestamp%`: the device's m-lap-us in performance mode; None in energy mode, where
        the timestamp is an edge of the pin."""
        lines = self.command("timestamp")
        if self.mode == "energy" and not lines:
            return None
        return int(self._expect(lines, _LAP, "timestamp"))

    def results(self) -> list[float]:
        body = self._expect(self.command("results"), _RESULTS, "results")
        try:
            return [float(v) for v in body.split(",")] if body else []
        except ValueError:
            raise RunError(f"unreadable m-results line: [{body[:80]}]", where=self.name) from None


def check_model_id(reported: str, expected: str, where: str, hint: str) -> None:
    """The firmware on the device must be this model's (its `m-model-[...]` reply)."""
    if reported != expected:
        raise RunError(
            f"the firmware on the device reports m-model-[{reported}], this model is {expected}",
            where=where,
            hint=hint,
        )


def default_infer(model_id: str, emulated: bool) -> tuple[int, int]:
    """(inferences, warm-ups) the runner uses for `model_id` (a few under emulation)."""
    return EMULATED_INFER if emulated else RUNNER_INFER.get(model_id, DEFAULT_INFER)


@dataclass(frozen=True)
class Agreement:
    """Device results against the reference, to RESULT_DECIMALS decimals."""

    agree: bool
    max_abs_diff: float
    first_difference: int | None  # flat index of the first element that differs
    note: str = ""


def compare_results(device: list[float], reference: np.ndarray) -> Agreement:
    """Agree when every device value is the reference rounded to three decimals: within half a
    unit of the last decimal, plus float32 rounding on the device (about 1e-6 relative)."""
    ref = np.asarray(reference, dtype=np.float64).ravel()
    if len(device) != ref.size:
        return Agreement(False, float("inf"), None, f"{len(device)} values, TFLM has {ref.size}")
    ours = np.asarray(device, dtype=np.float64)
    diff = np.abs(ours - ref)
    both_nan = np.isnan(ours) & np.isnan(ref)
    tolerance = 0.5 * 10.0**-RESULT_DECIMALS + 1e-6 * (1.0 + np.abs(ref))
    bad = ~both_nan & ~(diff <= tolerance)
    worst = float(np.max(np.where(both_nan, 0.0, diff))) if ref.size else 0.0
    first = int(np.flatnonzero(bad)[0]) if bad.any() else None
    return Agreement(first is None, worst, first)


def dequantized(graph: Graph, output: np.ndarray) -> np.ndarray:
    """The first output as real numbers: scale * (q - zero_point) for quantized integers."""
    t = graph.tensors[graph.outputs[0]]
    values = np.asarray(output, dtype=np.float64).ravel()
    if t.quant is None or np.dtype(DTYPES[t.dtype][0]).kind == "f":
        return values
    return float(np.float32(t.quant.scale)) * (values - t.quant.zero_point)
