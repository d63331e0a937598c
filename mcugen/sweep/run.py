"""A sweep from start to end: expand the jobs, skip those the results file holds, run the rest
on the engine with a progress line, and read every job's result back in the table's order."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from mcugen.sweep import engine
from mcugen.sweep.grid import Job
from mcugen.sweep.jobs import OK, Result
from mcugen.sweep.store import Store


@dataclass(frozen=True)
class Outcome:
    """The results of every job of the sweep (sorted), how many ran now, how many were done."""

    rows: list[dict[str, Any]]
    ran: int
    skipped: int
    seconds: float


class ProgressLine:
    """One line on stderr, rewritten as results arrive: done of total, failures, the time left
    at this run's pace so far. Only on a terminal, and not when quiet."""

    def __init__(self, total: int, *, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.total, self.done, self.failed = total, 0, 0
        self.stream = stream or sys.stderr
        self.shown = not quiet and self.stream.isatty()
        self.start = time.monotonic()

    def update(self, result: Result) -> None:
        self.done += 1
        self.failed += result.status != OK
        if not self.shown:
            return
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done)
        bar = "#" * (20 * self.done // max(self.total, 1))
        self.stream.write(
            f"\rmcugen sweep [{bar:<20}] {self.done} of {self.total} jobs, {self.failed} not ok, "
            f"{_clock(elapsed)} elapsed, about {_clock(left)} left \x1b[K"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return (
        f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"
        if minutes >= 60
        else f"{minutes}:{secs:02d}"
    )


def sweep(
    jobs: Sequence[Job],
    results: Path,
    *,
    workers: int,
    ray: str | None = None,
    quiet: bool = False,
) -> Outcome:
    """Run the jobs `results` does not hold yet, each result committed as it arrives."""
    store = Store(results)
    try:
        done = store.done()
        todo = [j for j in jobs if j.key not in done]
        line = ProgressLine(len(todo), quiet=quiet)
        start = time.monotonic()

        def record(result: Result) -> None:
            store.add(result)
            line.update(result)

        try:
            if todo:
                engine.run_jobs(todo, record, workers=workers, ray=ray)
        finally:
            line.close()
        return Outcome(store.rows(jobs), len(todo), len(jobs) - len(todo), time.monotonic() - start)
    finally:
        store.close()
