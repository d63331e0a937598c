"""A progress line on the terminal for the waits over two seconds (planning, CP-SAT, compiling,
runs on a board or its twin, training).

`with step("compiling for host") as s: ... s.update("sample 2 of 5")` prints nothing for the first
DELAY_SECONDS of a wait, then one line on stderr that rewrites itself about four times a second
("mcugen: planning > order search, 120,000 of 150,000 transitions (3 s)"), and erases it when the
wait ends, however it ends (an error, Ctrl-C). A step opened inside another adds to its line; the
seconds are the wait's, from its first step. Nothing at all is printed when stderr is not a
terminal (a pipe or a file: output stays byte-identical) or after `configure(quiet=True)`
(`--quiet`). It only prints: no plan, firmware or figure depends on the clock. Imports nothing of
mcugen, so any stage may report how far it is.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

#: Seconds of a wait before its line appears; MCUGEN_PROGRESS_DELAY changes it (`configure`).
DELAY_SECONDS = 2.0
REFRESH_SECONDS = 0.25

_quiet = False
_delay = DELAY_SECONDS
_lock = threading.Lock()
_open: list[Step] = []  # the steps of the wait on screen, outermost first
_line: _Line | None = None


def configure(*, quiet: bool) -> None:
    """`--quiet`: no progress line at all. Reads MCUGEN_PROGRESS_DELAY (seconds, for tests)."""
    global _quiet, _delay
    _quiet = quiet
    with contextlib.suppress(ValueError):
        _delay = min(max(0.0, float(os.environ.get("MCUGEN_PROGRESS_DELAY", DELAY_SECONDS))), 3600)


class Step:
    """One part of a wait: what it is, and how far it is (`update`: an assignment, cheap)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.detail = ""

    def update(self, detail: str) -> None:
        self.detail = detail


class _Line:
    """The line of one wait: its stream, start, whether it is on screen, and when to stop."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.shown = False
        self.stop = threading.Event()


@contextlib.contextmanager
def step(what: str) -> Iterator[Step]:
    """A step of a wait, shown on the terminal's progress line once the wait is DELAY_SECONDS
    old (module docstring)."""
    global _line
    current = Step(what)
    stream = sys.stderr
    if _quiet or not _is_terminal(stream):
        yield current
        return
    with _lock:
        _open.append(current)
        if _line is None:
            _line = _Line(stream)
            threading.Thread(target=_draw, args=(_line,), name="progress", daemon=True).start()
    try:
        yield current
    finally:
        with _lock:
            _open.remove(current)
            if not _open and _line is not None:
                _line.stop.set()
                if _line.shown:
                    _write(_line.stream, "\r\x1b[K")
                _line = None


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):  # closed or detached
        return False


def _draw(line: _Line) -> None:
    """The drawing thread of one wait: the line every REFRESH_SECONDS after the delay."""
    wait = _delay
    while not line.stop.wait(wait):
        wait = REFRESH_SECONDS
        with _lock:
            if line.stop.is_set():
                return
            text = "mcugen: " + " > ".join(
                ", ".join(filter(None, (s.what, s.detail))) for s in _open
            )
            seconds = f" ({time.monotonic() - line.start:.0f} s)"
            text = text[: max(_width(line.stream) - 1 - len(seconds), 0)] + seconds
            line.shown |= _write(line.stream, f"\r{text}\x1b[K")


def _width(stream: TextIO) -> int:
    """The terminal's columns (a wrapped line could not be rewritten), 80 when it does not say."""
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (OSError, ValueError):
        return 80


def _write(stream: TextIO, text: str) -> bool:
    try:
        stream.write(text)
        stream.flush()
        return True
    except (OSError, ValueError):  # the terminal went away: the line is not worth an error
        return False
