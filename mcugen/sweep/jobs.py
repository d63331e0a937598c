"""The one job function every engine runs (a process pool's worker or a Ray task): a `Job` in,
a `Result` out, through mcugen.api. Failures are data: a model that does not fit, an operator the
runtime lacks, a build or QEMU failure, even a bug, come back as a result with a status and the
one-line reason, never as an exception."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcugen.errors import (
    BuildError,
    DoesNotFit,
    McugenError,
    ModelError,
    RunError,
    UnsupportedError,
)
from mcugen.sweep.grid import Job

OK = "ok"
NO_FIT = "no-fit"
UNSUPPORTED = "unsupported"
MISMATCH = "mismatch"
BAD_MODEL = "bad-model"
BUILD_FAILED = "build-failed"
RUN_FAILED = "run-failed"
TIMEOUT = "timeout"
FAILED = "failed"
CRASHED = "crashed"  # the worker died twice (or the job raised a bug)

#: The figures a result may carry, in the table's order: bytes, instructions and estimates.
FIGURES = ("arena", "ram", "flash", "instructions", "ms", "uj")


@dataclass(frozen=True)
class Result:
    """A job's outcome: the compared part (status, reason, figures) and its wall-clock
    seconds and attempts, which the store keeps apart (they differ from run to run)."""

    job: Job
    status: str
    reason: str
    figures: Mapping[str, Any]
    seconds: float = 0.0
    attempts: int = 1

    @property
    def figures_json(self) -> str:
        return json.dumps(dict(self.figures), sort_keys=True, separators=(",", ":"))


def run_job(job: Job) -> Result:
    """Run `job` through mcugen.api; never raises (a bug becomes a "crashed" result)."""
    start = time.perf_counter()
    try:
        status, reason, figures = _dispatch(job)
    except UnsupportedError as exc:
        status, reason, figures = UNSUPPORTED, exc.line(), {}
    except ModelError as exc:
        status, reason, figures = BAD_MODEL, exc.line(), {}
    except DoesNotFit as exc:
        status, reason, figures = NO_FIT, exc.line(), {}
    except BuildError as exc:
        status, reason, figures = BUILD_FAILED, exc.line(), {}
    except RunError as exc:
        timed_out = "timed out" in exc.line() or "timeout" in exc.line()
        status, reason, figures = TIMEOUT if timed_out else RUN_FAILED, exc.line(), {}
    except McugenError as exc:
        status, reason, figures = FAILED, exc.line(), {}
    except Exception as exc:  # a bug in mcugen: still a row, named as a bug
        status, reason, figures = CRASHED, f"internal error: {type(exc).__name__}: {exc}", {}
    seconds = time.perf_counter() - start
    return Result(job, status, " ".join(reason.split())[:300], figures, seconds)


def _dispatch(job: Job) -> tuple[str, str, dict[str, Any]]:
    from mcugen import api

    options = json.loads(job.options)
    if job.job in ("plan", "estimate"):
        planned = api.plan(job.model_path, job.board, options, link=job.job == "plan")
        return _planned(job, planned)
    if job.job == "build":
        built = api.build(job.model_path, job.board, options)
        sizes = {"arena": built.arena_bytes, "ram": built.ram_bytes, "flash": built.flash_bytes}
        return OK, "", _present(sizes)
    if job.job == "run":
        ran = api.run(job.model_path, job.board, options)
        figures: dict[str, Any] = {
            "arena": ran.arena_bytes,
            "ram": ran.ram_bytes,
            "flash": ran.flash_bytes,
            "instructions": ran.per_inference if ran.unit == "instructions" else None,
            "ms": ran.estimated_ms,
            "uj": ran.estimated_uj,
        }
        return OK, "", _present(figures)
    checked = api.verify(job.model_path, job.board, options, samples=3)
    first = checked.mismatches[0] if checked.mismatches else ""
    return (OK if checked.ok else MISMATCH), first, {}


def _planned(job: Job, planned: Any) -> tuple[str, str, dict[str, Any]]:
    figures: dict[str, Any] = {"arena": planned.arena_bytes, "ram": planned.ram_need}
    if job.job == "plan":
        figures["flash"] = planned.flash_need
    else:
        figures.update(
            instructions=planned.estimated_instructions,
            ms=planned.estimated_ms,
            uj=planned.estimated_uj,
        )
    if planned.unsupported:
        return UNSUPPORTED, planned.unsupported, _present(figures)
    if planned.fits is False:
        return NO_FIT, planned.problem or "does not fit", _present(figures)
    return OK, "", _present(figures)


def _present(figures: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in figures.items() if v is not None}
