"""The fuzzer's outcomes (benchmarks/fuzz.py): its options, one mutant's result, a stage run in
this process under an alarm (its outcome told from its exit code, error line or exception), and
the table of outcomes per stage."""

from __future__ import annotations

import contextlib
import io
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcugen.cli import main as mcugen_main  # noqa: E402
from mcugen.errors import McugenError  # noqa: E402

ACCEPTED, CLEAN, INTERNAL, CRASH, HANG = (
    "accepted",
    "clean error",
    "internal error",
    "crash",
    "hang",
)
MATCH, TFLM_REJECTS = "matches TFLM", "TFLM rejects"
SANITIZER, RUNTIME_CHECK, MISMATCH = "sanitizer report", "runtime check", "mismatch"
FAILURES = (INTERNAL, CRASH, HANG, SANITIZER, RUNTIME_CHECK, MISMATCH)


@dataclass(frozen=True)
class Options:
    mutants: int = 300
    seed: int = 1
    build_sample: int = 6
    jobs: int = 2
    timeout: float = 60.0  # per mutant and stage (plan, codegen); host runs and TFLM get 4x
    keep: Path | None = None
    only: tuple[int, ...] = ()  # just these mutant indices (to reproduce some)

    def indices(self) -> list[int]:
        return list(self.only) if self.only else list(range(self.mutants))


@dataclass
class Result:
    index: int
    seed: str
    kind: str
    stages: dict[str, str] = field(default_factory=dict)  # stage -> outcome
    message: str = ""  # of the first failing stage
    arena: int = -1
    size: int = 0
    work: int = 0  # estimated multiply-accumulates of one inference


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` swallows it."""


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def fire(signum: int, frame: Any) -> None:
        raise _Timeout

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def cli_outcome(args: list[str], timeout: float) -> tuple[str, str]:
    """`mcugen ARGS` in this process: (outcome, the error line or "")."""
    err = io.StringIO()
    try:
        with _alarm(timeout), contextlib.redirect_stdout(io.StringIO()):
            with contextlib.redirect_stderr(err):
                code = mcugen_main(args)
    except _Timeout:
        return HANG, f"over {timeout:.0f} s"
    except BaseException as exc:  # SystemExit from argparse, or anything the CLI let through
        return INTERNAL, f"{type(exc).__name__}: {exc}"
    lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
    if code == 0:
        return ACCEPTED, ""
    clean = code in (2, 3, 4) and len(lines) == 1 and lines[0].startswith("mcugen: error: ")
    return (CLEAN if clean else INTERNAL), " | ".join(lines)[:400] or f"exit {code}"


def stage_outcome(fn: Callable[[], Any], timeout: float) -> tuple[str, str, Any]:
    """Run `fn` in this process: (outcome, message, its value)."""
    try:
        with _alarm(timeout):
            return ACCEPTED, "", fn()
    except _Timeout:
        return HANG, f"over {timeout:.0f} s", None
    except McugenError as exc:
        return CLEAN, exc.line(), None
    except Exception as exc:
        return INTERNAL, f"{type(exc).__name__}: {exc}"[:400], None


def failures(results: list[Result]) -> list[Result]:
    return [r for r in results if any(o in FAILURES for o in r.stages.values())]


def table(results: list[Result]) -> str:
    stages = ("plan", "codegen", "host run")
    counts = {s: Counter(r.stages[s] for r in results if s in r.stages) for s in stages}
    outcomes = (ACCEPTED, MATCH, TFLM_REJECTS, CLEAN, *FAILURES)
    lines = ["| outcome | " + " | ".join(stages) + " |", "|---|" + "---|" * len(stages)]
    for o in outcomes:
        if any(counts[s][o] for s in stages):
            lines.append(f"| {o} | " + " | ".join(f"{counts[s][o]:,}" for s in stages) + " |")
    lines.append("| total | " + " | ".join(f"{sum(counts[s].values()):,}" for s in stages) + " |")
    return "\n".join(lines)
