"""Where a sweep's jobs run: a local process pool (concurrent.futures) on this machine's cores by
default, or Ray tasks (`--ray local` starts a Ray instance here, `--ray ADDRESS` joins a
cluster). Both run the same job function (sweep/jobs.py) and hand each result to `record` as it
arrives; neither schedules anything itself.

A worker that dies mid-job (killed, out of memory, a crash in native code) breaks the pool: the
jobs it held are retried once, each alone in a fresh process, so a job that kills its worker
every time cannot take others down with it; a second death is recorded as a "crashed" result.
Ray retries a task whose worker died once (`max_retries=1`) and then raises, recorded the same.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace

from mcugen.errors import McugenError
from mcugen.sweep.grid import Job
from mcugen.sweep.jobs import CRASHED, Result, run_job

Record = Callable[[Result], None]
DIED = "the worker running it died twice (killed or crashed); retried once alone"


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def run_jobs(jobs: Sequence[Job], record: Record, *, workers: int, ray: str | None = None) -> None:
    """Run every job on the chosen engine, `record` called with each result in this process."""
    if ray is not None:
        run_ray(jobs, record, workers=workers, address=ray)
    else:
        run_pool(jobs, record, workers=workers)


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))


def run_pool(jobs: Sequence[Job], record: Record, *, workers: int) -> None:
    """At most `workers` jobs in flight, so a broken pool costs at most that many retries."""
    queue = deque(jobs)
    pool = _pool(workers)
    inflight: dict[Future[Result], Job] = {}
    try:
        while queue or inflight:
            while queue and len(inflight) < workers:
                job = queue.popleft()
                inflight[pool.submit(run_job, job)] = job
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            broken = _collect(done, inflight, record)
            if broken:
                # the pool is unusable: every other job in flight fails too; wait for them all
                rest, _ = wait(inflight)
                broken += _collect(rest, inflight, record)
                pool.shutdown(wait=True, cancel_futures=True)
                for job in broken:
                    record(retry_alone(job))
                pool = _pool(workers)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _collect(
    done: set[Future[Result]], inflight: dict[Future[Result], Job], record: Record
) -> list[Job]:
    """Record the finished futures' results; the jobs whose worker died."""
    broken = []
    for future in sorted(done, key=lambda f: inflight[f]):
        job = inflight.pop(future)
        try:
            record(future.result())
        except BrokenProcessPool:
            broken.append(job)
    return broken


def retry_alone(job: Job) -> Result:
    """`job` once more, alone in a fresh process; "crashed" if that process dies too."""
    with _pool(1) as solo:
        try:
            return replace(solo.submit(run_job, job).result(), attempts=2)
        except BrokenProcessPool:
            return Result(job, CRASHED, DIED, {}, attempts=2)


def run_ray(jobs: Sequence[Job], record: Record, *, workers: int, address: str) -> None:
    """The jobs as Ray tasks: on a Ray instance started here with `workers` CPUs ("local"), or
    on the cluster at `address` (its CPUs, one a task)."""
    try:
        import ray
    except ImportError:
        raise McugenError(
            "--ray needs Ray, which is not installed", hint="pip install 'mcugen[ray]'"
        ) from None
    kwargs = {"num_cpus": workers} if address == "local" else {"address": address}
    try:
        ray.init(include_dashboard=False, log_to_driver=False, **kwargs)  # type: ignore[arg-type]
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise McugenError(f"cannot start or reach Ray ({exc})", where=address) from None
    try:
        task = ray.remote(num_cpus=1, max_retries=1)(run_job)
        pending = {task.remote(job): job for job in jobs}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                job = pending.pop(ref)
                try:
                    result: Result = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    head = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                    result = Result(job, CRASHED, f"{DIED} ({head})", {}, attempts=2)
                record(result)
    finally:
        ray.shutdown()
