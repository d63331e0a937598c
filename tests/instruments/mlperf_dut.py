"""A simulated MLPerf Tiny device in energy mode: the runner's `%` commands."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from instruments.bench import Bench, Pty, running

# --- An MLPerf Tiny device in energy mode --------------------------------------------------------


class MlperfDutSim:
    """The runner protocol of an energy-mode device: prints its banner each time the bench's
    supply comes on, queues a round on the bench for each `infer N W` and answers once the
    monitor streamed it."""

    def __init__(self, pty: Pty, bench: Bench, model_id: str = "unknown", mode: str = "energy"):
        self.pty, self.bench, self.model_id, self.mode = pty, bench, model_id, mode
        self.expecting = 0
        self.loaded = 0
        self._pending = b""

    def serve(self, stop: threading.Event) -> None:
        booted = 0  # the bench's boot this device has announced
        while not stop.is_set() and not self.pty.closed:
            if self.bench.powered.is_set() and booted != self.bench.boots:
                booted = self.bench.boots
                banner = f"m-timestamp-mode-{self.mode}\r\nm-init-done\r\nm-ready\r\n"
                self.pty.write(banner.encode())
            self._pending += self.pty.read()
            while b"%" in self._pending:
                raw, self._pending = self._pending.split(b"%", 1)
                lines = self._answer(raw.decode().strip().split())
                self.pty.write("".join(f"{line}\r\n" for line in [*lines, "m-ready"]).encode())

    def _answer(self, words: list[str]) -> list[str]:
        if words == ["name"]:
            return ["m-name-dut-[simulated]"]
        if words == ["profile"]:
            return ["m-profile-[ULPMark for tinyML Firmware V0.0.1]", f"m-model-[{self.model_id}]"]
        if words[:2] == ["db", "load"]:
            self.expecting, self.loaded = int(words[2]), 0
            return [f"m-[Expecting {self.expecting} bytes]"]
        if words[:1] == ["db"]:
            self.loaded += len(words[1]) // 2
            return ["m-load-done"] if self.loaded >= self.expecting else []
        if words[:1] == ["infer"]:
            n, w = int(words[1]), int(words[2])
            self.bench.queue_round(n)
            self.bench.wait_drained()
            time.sleep(0.02)
            return [f"m-warmup-start-{w}", "m-warmup-done", f"m-infer-start-{n}", "m-infer-done"]
        if words == ["results"]:
            return ["m-results-[0.100,0.900]"]
        return [f"e-[Unknown command: {' '.join(words)}]"]


@contextlib.contextmanager
def simulated_dut(bench: Bench, model_id: str = "unknown", mode: str = "energy") -> Iterator[Pty]:
    pty = Pty()
    with running(MlperfDutSim(pty, bench, model_id, mode), pty):
        yield pty
