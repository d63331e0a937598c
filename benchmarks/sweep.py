"""Jobs per second of `mcugen sweep` (issue 36) against the shell loop it replaces (one `mcugen
plan` or `mcugen run` process per model and board), for plan jobs (planned and linked) and run
jobs (built and run once on the QEMU twin): the loop, the local process pool with 1 and 2
workers, and Ray tasks on a Ray instance started here with 1 and 2 CPUs (when Ray is installed).
Each measurement is a fresh command with a new results file, start-up included. The last lines
MODEL a Ray cluster of N machines from the 1-worker Ray figures: they are not measurements.

Run: python benchmarks/sweep.py [--plan-models 8] [--run-models 4] [--boards a,b] [--cores 8]
[--jobs 10000]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_write import write_model


def classifier(seed: int, depth: int, hidden: int) -> bytes:
    """An int8 FULLY_CONNECTED (ReLU) -> FULLY_CONNECTED -> SOFTMAX model."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"clf{seed}")
    h = b.input((1, depth), "int8", scale=0.05, zero_point=0)
    width, scale = depth, 0.05
    for units, act in ((hidden, 1), (4, 0)):
        w_scales = rng.uniform(0.004, 0.01, units)
        w = b.const(rng.integers(-127, 128, (units, width), dtype=np.int8), scale=w_scales)
        bias = b.const(np.zeros(units, np.int32), scale=scale * w_scales, zero_point=0)
        y = b.activation((1, units), "int8", scale=0.1, zero_point=0)
        b.op("FULLY_CONNECTED", [h, w, bias], [y], fused_activation_function=act)
        h, width, scale = y, units, 0.1
    probs = b.activation((1, 4), "int8", scale=1.0 / 256, zero_point=-128)
    b.op("SOFTMAX", [h], [probs], beta=1.0)
    b.output(probs)
    return write_model(b.graph())


def models(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(count):
        path = folder / f"clf{k}.tflite"
        path.write_bytes(classifier(k, depth=64 + 32 * k, hidden=16 + 4 * k))
        paths.append(path)
    return paths


MCUGEN = [sys.executable, "-m", "mcugen.cli"]


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 3):  # 3: plan --board says it does not fit
        raise SystemExit(f"failed: {' '.join(argv)}\n{done.stderr}")
    return time.perf_counter() - start


def shell_loop(paths: list[Path], boards: list[str], job: str) -> float:
    """One process per model and board, as a shell loop over the commands runs them."""
    total = 0.0
    for path in paths:
        for board in boards:
            if job == "plan":
                argv = ["plan", str(path), "--board", board, "--json", "--no-strategies"]
            else:
                argv = ["run", str(path), "--board", board, "--emulate", "--json"]
            total += timed([*MCUGEN, *argv])
    return total


def sweep(folder: Path, boards: list[str], job: str, work: Path, *engine: str) -> float:
    db = Path(tempfile.mkdtemp(dir=work)) / "r.sqlite"
    argv = ["sweep", str(folder), "--boards", ",".join(boards), "--jobs", job, "-o", str(db)]
    return timed([*MCUGEN, *argv, "-q", *engine])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan-models", type=int, default=8)
    ap.add_argument("--run-models", type=int, default=4)
    ap.add_argument("--boards", default="nucleo-f767,nucleo-l4r5zi")
    ap.add_argument("--cores", type=int, default=8, help="cores per machine of the model")
    ap.add_argument("--jobs", type=int, default=10_000, help="jobs of the modelled sweep")
    args = ap.parse_args()
    boards = args.boards.split(",")
    has_ray = importlib.util.find_spec("ray") is not None
    rows: list[tuple[str, str, int, float]] = []
    ray_one: dict[str, tuple[int, float]] = {}
    with tempfile.TemporaryDirectory(prefix="mcugen-bench-sweep-") as tmp:
        work = Path(tmp)
        for job, count in (("plan", args.plan_models), ("run", args.run_models)):
            folder = work / job
            paths = models(folder, count)
            jobs = count * len(boards)
            rows.append(
                (job, "shell loop, one process a call", jobs, shell_loop(paths, boards, job))
            )
            for w in (1, 2):
                seconds = sweep(folder, boards, job, work, "--workers", str(w))
                rows.append((job, f"local pool, {w} worker{'s' * (w > 1)}", jobs, seconds))
            for w in (1, 2) if has_ray else ():
                seconds = sweep(folder, boards, job, work, "--ray", "local", "--workers", str(w))
                rows.append((job, f"Ray local, {w} worker{'s' * (w > 1)}", jobs, seconds))
                if w == 1:
                    ray_one[job] = (jobs, seconds)
    print(f"mcugen sweep: jobs per second on this machine ({os.cpu_count()} cores, shared)")
    print(f"{'job':5} {'engine':32} {'jobs':>5} {'seconds':>8} {'jobs/s':>7}")
    for job, engine, jobs, seconds in rows:
        print(f"{job:5} {engine:32} {jobs:>5} {seconds:>8.1f} {jobs / seconds:>7.2f}")
    if not has_ray:
        print("Ray is not installed (pip install 'mcugen[ray]'): no Ray rows")
        return 0
    print(
        f"\nMODEL, not a measurement: {args.jobs:,} jobs on a Ray cluster of N machines with "
        f"{args.cores} cores each: Ray's start-up (the Ray 1-worker row less the pool's) once, "
        "then the pool's 1-worker seconds per job spread over every core; assumes the driver, "
        "the results file and the network keep up"
    )
    for job, (jobs, seconds) in ray_one.items():
        pool_one = next(s for j, e, _, s in rows if j == job and e == "local pool, 1 worker")
        start_up, per_job = max(seconds - pool_one, 0.0), pool_one / jobs
        for n in (1, 4, 16, 64):
            total = start_up + args.jobs * per_job / (n * args.cores)
            print(f"  {job:5} N={n:<3} {total:8.0f} s, about {args.jobs / total:,.0f} jobs/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
