"""The progress line (mcugen/progress.py): after the delay only, on a terminal only, never with
--quiet, erased however a step ends; and the long waits report into it."""

from __future__ import annotations

import argparse
import ast
import io
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from mcugen import progress
from mcugen.cli import _parser, main
from mcugen.plan.order.optimal import optimal_order
from testgraphs import randwire

ERASE = "\r\x1b[K"


class Terminal(io.StringIO):
    """stderr as a terminal: what was written, and isatty() True."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[Terminal]:
    """A terminal, no delay. A test makes it sys.stderr itself: pytest's capture sets sys.stderr
    again between a fixture and its test."""
    stream = Terminal()
    monkeypatch.setattr(progress, "REFRESH_SECONDS", 0.01)
    monkeypatch.setattr(progress, "_delay", 0.0)
    monkeypatch.setattr(progress, "_quiet", False)
    yield stream
    assert not progress._open and progress._line is None  # every step closed its line


def written_until(stream: io.StringIO, text: str, seconds: float = 10.0) -> str:
    """What `stream` holds once it shows `text` (the drawing thread runs on its own)."""
    deadline = time.monotonic() + seconds
    while text not in stream.getvalue():
        assert time.monotonic() < deadline, f"{text!r} never shown: {stream.getvalue()!r}"
        time.sleep(0.01)
    return stream.getvalue()


def test_a_line_after_the_delay_erased_at_the_end(
    terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr", terminal)
    with progress.step("planning"), progress.step("order search") as inner:
        inner.update("20,000 of 150,000 transitions")
        shown = written_until(terminal, "transitions")
    assert "\rmcugen: planning > order search, 20,000 of 150,000 transitions (0 s)\x1b[K" in shown
    assert terminal.getvalue().endswith(ERASE)


def test_nothing_within_the_delay(terminal: Terminal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr(progress, "_delay", 60.0)
    with progress.step("compiling for host"):
        time.sleep(0.1)
    assert terminal.getvalue() == ""


@pytest.mark.parametrize("stream", [io.StringIO(), None])
def test_nothing_on_a_pipe_or_a_file(
    terminal: Terminal, monkeypatch: pytest.MonkeyPatch, stream: io.StringIO | None
) -> None:
    monkeypatch.setattr("sys.stderr", stream)
    before = threading.active_count()
    with progress.step("compiling for host") as step:
        step.update("still")
        assert threading.active_count() == before  # no drawing thread either
        time.sleep(0.05)
    assert stream is None or stream.getvalue() == ""


def test_nothing_when_quiet(terminal: Terminal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setenv("MCUGEN_PROGRESS_DELAY", "0")
    progress.configure(quiet=True)  # the fixture puts both back
    with progress.step("compiling for host"):
        time.sleep(0.05)
    assert terminal.getvalue() == ""


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_erased_on_an_error_and_the_error_goes_on(
    terminal: Terminal, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    monkeypatch.setattr("sys.stderr", terminal)
    with pytest.raises(error), progress.step("running on QEMU mps2-an500"):
        written_until(terminal, "QEMU")
        raise error
    assert terminal.getvalue().endswith(ERASE)


def test_steps_from_several_threads(terminal: Terminal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", terminal)

    def work(k: int) -> None:
        for n in range(50):
            with progress.step(f"thread {k}") as step:
                step.update(f"{n}")
                time.sleep(0.001)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert terminal.getvalue().endswith(ERASE) or terminal.getvalue() == ""


@pytest.mark.parametrize("value", ["0.5", "soon", "inf"])
def test_the_delay_from_the_environment(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setattr(progress, "_delay", progress.DELAY_SECONDS)
    monkeypatch.setattr(progress, "_quiet", False)
    monkeypatch.setenv("MCUGEN_PROGRESS_DELAY", value)
    progress.configure(quiet=False)
    assert progress._delay == {"0.5": 0.5, "soon": progress.DELAY_SECONDS, "inf": 3600}[value]


def recorded(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every step opened from now on: its name, then each update, whether shown or not."""
    seen: list[list[str]] = []
    real: Callable[[str], AbstractContextManager[progress.Step]] = progress.step

    @contextmanager
    def step(what: str) -> Iterator[progress.Step]:
        seen.append([what])
        with real(what) as s:
            s.update = seen[-1].append  # type: ignore[method-assign,assignment]
            yield s

    monkeypatch.setattr(progress, "step", step)
    return seen


def test_the_order_search_says_how_far_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = recorded(monkeypatch)
    optimal_order(randwire(1, nodes=24), time_budget=0.3)
    counts = ["20,003 of 45,000 transitions", "40,008 of 45,000 transitions"]
    assert seen == [["order search", *counts]]  # counted in work: the same on any machine


def test_the_line_changes_no_answer(terminal: Terminal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", terminal)
    shown = optimal_order(randwire(1, nodes=24), time_budget=0.3)
    assert "order search" in terminal.getvalue()
    progress._quiet = True  # the fixture puts it back
    assert optimal_order(randwire(1, nodes=24), time_budget=0.3) == shown


def test_cp_sat_is_a_step(monkeypatch: pytest.MonkeyPatch) -> None:
    from ortools.sat.python import cp_model

    from mcugen.plan.solver import solve

    seen = recorded(monkeypatch)
    model = cp_model.CpModel()
    x = model.new_int_var(0, 10, "x")
    model.maximize(x)
    assert solve(cp_model.CpSolver(), model) == cp_model.OPTIMAL
    assert seen == [["CP-SAT search"]]


def test_quiet_on_every_sub_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "_quiet", False)
    actions = _parser()._actions
    commands = next(a for a in actions if isinstance(a, argparse._SubParsersAction)).choices
    assert len(commands) >= 10
    for name, sub in commands.items():
        flags = [a.option_strings for a in sub._actions if a.dest == "quiet"]
        assert flags == [["-q", "--quiet"]], name
    assert main(["boards", "--quiet"]) == 0
    assert progress._quiet


def test_progress_imports_nothing_of_mcugen() -> None:
    names = []
    for node in ast.walk(ast.parse(Path(progress.__file__).read_text())):
        if isinstance(node, ast.ImportFrom):
            names.append(node.module or ".")
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    assert names and not [n for n in names if n.startswith(("mcugen", "."))]


def test_a_long_line_is_cut_to_the_terminal_keeping_the_time(
    terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr", terminal)
    with progress.step("running on QEMU mps2-an500") as step:
        step.update("x" * 100)
        shown = written_until(terminal, "(0 s)")
    line = shown.split("\r")[1].removesuffix("\x1b[K")
    assert len(line) == 79 and line.endswith("xxx (0 s)")  # no wrap: 80 columns, StringIO's
