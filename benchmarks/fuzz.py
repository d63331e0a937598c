"""Fuzz the importer, the validation, the planner and codegen with mutants of the seed models, and
run a sample of the accepted ones on the host under AddressSanitizer and UBSan against TFLM.

Each mutant (benchmarks/fuzz_mutants.py) goes through `mcugen plan` in a worker process, in-process
with an alarm; when the plan is accepted, also through codegen (`generate`, what `mcugen build`
does before compiling). A sample of the mutants codegen accepts is then built for the host with
`-fsanitize=address,undefined -fno-sanitize-recover=all`, run on seeded inputs and compared with
TFLM (`tflite_micro`, in its own process, which may reject or crash on the mutant).
Outcomes: accepted, clean error (one `mcugen: error:` line, exit 2-4), internal error (exit 70 or
any other exception), crash (the worker died), hang (over the time limit), and for the host runs:
matches TFLM, TFLM rejects, sanitizer report, runtime check (a kernel's MCU_ENSURE fired: the
validation let an invalid model through), mismatch. Any internal error, crash, hang, sanitizer
report, runtime check or mismatch fails the run (exit 1); mutants of those are kept with --keep.
Run: python benchmarks/fuzz.py --mutants 10000 --seed 1 --build-sample 500 [--jobs 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_mutants import Corpus, Mutant, seeds  # noqa: E402
from fuzz_outcomes import (  # noqa: E402
    ACCEPTED,
    CRASH,
    HANG,
    INTERNAL,
    MATCH,
    MISMATCH,
    RUNTIME_CHECK,
    SANITIZER,
    TFLM_REJECTS,
    Options,
    Result,
    cli_outcome,
    failures,
    stage_outcome,
    table,
)

from mcugen.boards import Target, load_board, resolve_target  # noqa: E402
from mcugen.errors import BuildError, RunError  # noqa: E402
from mcugen.firmware.compile import build  # noqa: E402
from mcugen.link.host_run import random_inputs, run_host  # noqa: E402
from mcugen.model.ir import Graph  # noqa: E402
from mcugen.model.tflite_import import import_model  # noqa: E402
from mcugen.pipeline import generate  # noqa: E402
from mcugen.reference import first_difference  # noqa: E402

SANITIZER_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g")
#: Seeds too heavy to compile and run under the sanitizers in the sample (plan and codegen only).
MAX_SAMPLE_FILE_BYTES = 1 << 20
MAX_SAMPLE_ARENA_BYTES = 32 << 20
MAX_SAMPLE_WORK = 300_000_000  # multiply-accumulates, roughly: a few seconds under the sanitizers
SAMPLES_PER_RUN = 2
FLOAT_RTOL = 1e-5
TFLM_SCRIPT = """
import sys
import numpy as np
from mcugen.model.tflite_import import import_model
from mcugen.reference import tflm_outputs
model = open(sys.argv[1], "rb").read()
z = np.load(sys.argv[2])
n = int(z["count"]); k = int(z["inputs"])
samples = [[z[f"s{s}_{i}"] for i in range(k)] for s in range(n)]
outs = tflm_outputs(model, import_model(model), samples)
np.savez(sys.argv[3], **{f"s{s}_{j}": o for s, row in enumerate(outs) for j, o in enumerate(row)})
"""


# --- Stage 1: plan and codegen of every mutant -------------------------------------------------


def work_estimate(graph: Graph) -> int:
    """Multiply-accumulates of one inference, roughly: each output element costs the elements of
    the largest constant input per output channel (a filter), else one per input element."""
    total = 0
    for op in graph.operators:
        outs = [graph.tensors[t] for t in op.outputs if t >= 0]
        ins = [graph.tensors[t] for t in op.inputs if t >= 0]
        out_elements = sum(t.num_elements for t in outs)
        filters = [t.num_elements for t in ins if t.is_constant and len(t.shape) >= 2]
        channels = max((t.shape[-1] for t in outs if t.shape), default=1) or 1
        per_output = max(filters) // channels if filters else 1
        total += out_elements * max(per_output, 1) + sum(t.num_elements for t in ins)
    return total


def plan_job(corpus: Corpus, opts: Options, index: int, workdir: Path) -> Result:
    # A numpy overflow warning in a check is a check that computed the wrong thing (an int16 sum
    # that wrapped let an out-of-range index pass): an internal error here, not a stderr line.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return _plan_job(corpus, opts, index, workdir)


def _plan_job(corpus: Corpus, opts: Options, index: int, workdir: Path) -> Result:
    m = corpus.mutant(opts.seed, index)
    path = workdir / f"mutant-{index}.tflite"
    path.write_bytes(m.data)
    result = Result(index, m.seed, m.kind, size=len(m.data))
    outcome, message = cli_outcome(["plan", str(path)], opts.timeout)
    result.stages["plan"], result.message = outcome, message
    if outcome == ACCEPTED:
        outcome, message, gen = stage_outcome(
            lambda: generate(import_model(m.data, source=path.name)), opts.timeout
        )
        result.stages["codegen"], result.message = outcome, message
        if gen is not None:
            result.arena, result.work = gen.view_model.arena_bytes, work_estimate(gen.graph)
    path.unlink()
    return result


# --- Stage 2: host build and run under the sanitizers, against TFLM -----------------------------


def sanitized_host() -> Target:
    """The host board with the sanitizers in its compile and link flags (the Makefile takes them
    from the port board, which for the host is the board itself)."""
    target = resolve_target(load_board("host"), emulate=False)
    board = target.port_board
    sanitized = replace(
        board,
        cflags=(*board.cflags, *SANITIZER_FLAGS),
        ldflags=(*board.ldflags, *SANITIZER_FLAGS[:1]),
    )
    return replace(target, board=sanitized, port_board=sanitized)


def tflm_run(model: Path, samples: list[list[np.ndarray]], timeout: float) -> list[Any] | str:
    """TFLM's outputs per sample, or why it gave none (it rejected, crashed or timed out)."""
    tmp = model.parent
    blob: dict[str, Any] = {
        f"s{s}_{i}": a for s, row in enumerate(samples) for i, a in enumerate(row)
    }
    np.savez(tmp / "in.npz", count=len(samples), inputs=len(samples[0]), **blob)
    cmd = [sys.executable, "-c", TFLM_SCRIPT, str(model), str(tmp / "in.npz"), str(tmp / "o.npz")]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return "TFLM timed out"
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return f"TFLM exit {proc.returncode}: {lines[-1] if lines else ''}"[:200]
    z = np.load(tmp / "o.npz")
    return [
        [z[f"s{s}_{j}"] for j in range(len(z.files) // len(samples))] for s in range(len(samples))
    ]


def same_outputs(ours: np.ndarray, ref: np.ndarray) -> bool:
    """Integers identical; floats within FLOAT_RTOL, a NaN or infinity only where TFLM has the
    same (mcugen.reference.first_difference, as every bit-exactness test)."""
    if ours.size != ref.size:
        return False
    return first_difference(ours.ravel(), ref.ravel().astype(ours.dtype), FLOAT_RTOL) is None


def run_job(corpus: Corpus, opts: Options, index: int, workdir: Path) -> Result:
    m = corpus.mutant(opts.seed, index)
    result = Result(index, m.seed, m.kind, size=len(m.data))
    with tempfile.TemporaryDirectory(prefix="fuzz-", dir=workdir) as tmp:
        try:
            outcome, message = _run_and_compare(m, opts, Path(tmp))
        except Exception as exc:  # codegen accepted this mutant a moment ago: a bug either way
            outcome, message = INTERNAL, f"{type(exc).__name__}: {exc}"[:400]
    result.stages["host run"], result.message = outcome, message
    return result


def _run_and_compare(m: Mutant, opts: Options, tmp: Path) -> tuple[str, str]:
    graph = import_model(m.data, source="mutant")
    gen = generate(graph)
    try:
        exe = build(gen, sanitized_host(), tmp / "project").executable
    except BuildError as exc:
        return INTERNAL, f"the generated C does not compile: {exc.what}"[:400]
    if SANITIZER_FLAGS[0] not in (tmp / "project" / "Makefile").read_text():
        return INTERNAL, "fuzzer: the host build is not sanitized"
    samples = [random_inputs(gen.graph, opts.seed * 1000 + k) for k in range(SAMPLES_PER_RUN)]
    try:
        ours = run_host(exe, gen.graph, samples, timeout=4 * opts.timeout).outputs
    except RunError as exc:
        text = exc.what
        if "Sanitizer" in text or "runtime error:" in text:
            return SANITIZER, text[:400]
        return (HANG if "did not finish" in text else RUNTIME_CHECK), text[:400]
    (tmp / "model.tflite").write_bytes(m.data)
    ref = tflm_run(tmp / "model.tflite", samples, 4 * opts.timeout)
    if isinstance(ref, str):
        return TFLM_REJECTS, ref
    for s, (row, ref_row) in enumerate(zip(ours, ref, strict=True)):
        for j, (o, r) in enumerate(zip(row, ref_row, strict=True)):
            if not same_outputs(o, r):
                return MISMATCH, f"sample {s} output {j} differs from TFLM's"
    return MATCH, ""


# --- Workers -----------------------------------------------------------------------------------

JOBS: dict[str, Callable[[Corpus, Options, int, Path], Result]] = {
    "plan": plan_job,
    "run": run_job,
}


def _worker(conn: Connection, corpus: Corpus, opts: Options, workdir: str) -> None:
    warnings.simplefilter("always")  # a warning printed with an error line makes it unclean
    while True:
        job = conn.recv()
        if job is None:
            return
        kind, index = job
        conn.send(JOBS[kind](corpus, opts, index, Path(workdir)))


@dataclass
class _Slot:
    process: Any
    conn: Connection
    job: tuple[str, int] | None = None
    started: float = 0.0


def run_jobs(
    jobs: list[tuple[str, int]], corpus: Corpus, opts: Options, workdir: Path, limit: float
) -> list[Result]:
    """Run `jobs` on `opts.jobs` worker processes; a worker that dies is a crash, one that runs
    over `limit` seconds is killed and its job is a hang; either is replaced."""
    ctx = multiprocessing.get_context("fork")

    def start() -> _Slot:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, corpus, opts, str(workdir)), daemon=True)
        proc.start()
        child.close()
        return _Slot(proc, parent)

    pending, results = list(reversed(jobs)), []
    slots = [start() for _ in range(max(1, min(opts.jobs, len(jobs))))]
    while pending or any(s.job for s in slots):
        for s in slots:
            if s.job is None and pending:
                s.job, s.started = pending.pop(), time.monotonic()
                s.conn.send(s.job)
        ready = wait([s.conn for s in slots if s.job], timeout=1.0)
        for k, s in enumerate(slots):
            if s.job is None:
                continue
            if s.conn in ready:
                try:
                    results.append(s.conn.recv())
                    s.job = None
                    continue
                except EOFError:
                    s.process.join(5)
                    outcome, message = CRASH, f"worker died (exit {s.process.exitcode})"
            elif time.monotonic() - s.started > limit:
                s.process.kill()
                s.process.join(5)
                outcome, message = HANG, f"no answer within {limit:.0f} s; worker killed"
            else:
                continue
            assert s.job is not None
            results.append(_lost(corpus, opts, s.job, outcome, message))
            slots[k] = start()
    for s in slots:
        s.conn.send(None)
        s.process.join(5)
    return sorted(results, key=lambda r: r.index)


def _lost(corpus: Corpus, opts: Options, job: tuple[str, int], outcome: str, msg: str) -> Result:
    m = corpus.mutant(opts.seed, job[1])
    stage = "plan" if job[0] == "plan" else "host run"
    return Result(job[1], m.seed, m.kind, {stage: outcome}, msg, size=len(m.data))


# --- The run -----------------------------------------------------------------------------------


def build_sample(results: list[Result], opts: Options) -> list[int]:
    """Up to `opts.build_sample` mutants that codegen accepted, spread over the seeds, light enough
    to compile and run under the sanitizers (file, arena and estimated work under the MAX_SAMPLE
    limits)."""
    by_seed: dict[str, list[Result]] = {}
    for r in results:
        light = r.size <= MAX_SAMPLE_FILE_BYTES and 0 <= r.arena <= MAX_SAMPLE_ARENA_BYTES
        light = light and r.work <= MAX_SAMPLE_WORK
        if r.stages.get("codegen") == ACCEPTED and light:
            by_seed.setdefault(r.seed, []).append(r)
    rng = random.Random(f"{opts.seed}:sample")
    groups = [by_seed[name] for name in sorted(by_seed)]
    for g in groups:
        rng.shuffle(g)
    rng.shuffle(groups)
    chosen: list[int] = []
    while len(chosen) < opts.build_sample and any(groups):
        for g in groups:
            if g and len(chosen) < opts.build_sample:
                chosen.append(g.pop().index)
    return sorted(chosen)


def fuzz(opts: Options, corpus: Corpus) -> list[Result]:
    """Every mutant through plan (and codegen when accepted), then the sample through host runs."""
    with tempfile.TemporaryDirectory(prefix="mcugen-fuzz-") as tmp:
        work = Path(tmp)
        plans = run_jobs([("plan", i) for i in opts.indices()], corpus, opts, work,
                         2 * opts.timeout + 30)  # fmt: skip
        sample = [("run", i) for i in build_sample(plans, opts)]
        runs = run_jobs(sample, corpus, opts, work, 12 * opts.timeout + 60)
    by_index = {r.index: r for r in plans}
    for r in runs:
        by_index[r.index].stages.update(r.stages)
        by_index[r.index].message = r.message or by_index[r.index].message
    return plans


def report(results: list[Result], corpus: Corpus, opts: Options, seconds: float) -> int:
    print(
        f"fuzz: seed {opts.seed}, {len(results):,} mutants of {len(corpus.seeds)} seed models, "
        f"{opts.jobs} workers, {seconds:.0f} s"
    )
    print(table(results))
    rejections = Counter(
        r.message[:90] for r in results if r.stages.get("host run") == TFLM_REJECTS
    )
    for message, count in rejections.most_common(8):
        print(f"  TFLM rejects {count}x: {message}")
    bad = failures(results)
    for r in bad[:40]:
        print(f"  mutant {r.index} ({r.seed}, {r.kind}): {r.stages} {r.message}")
    if opts.keep is not None and bad:
        opts.keep.mkdir(parents=True, exist_ok=True)
        for r in bad:
            (opts.keep / f"mutant-{opts.seed}-{r.index}.tflite").write_bytes(
                corpus.mutant(opts.seed, r.index).data
            )
        print(f"  {len(bad)} failing mutants written to {opts.keep}")
    print(f"{len(bad)} failures" if bad else "no failures")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mutants", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--build-sample", type=int, default=500)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant and stage")
    p.add_argument("--keep", type=Path, default=None, help="write failing mutants here")
    p.add_argument("--only", type=int, nargs="*", default=None, help="just these mutant indices")
    args = p.parse_args(argv)
    opts = Options(
        args.mutants,
        args.seed,
        args.build_sample,
        args.jobs,
        args.timeout,
        args.keep,
        tuple(args.only or ()),
    )
    corpus = Corpus(seeds())
    start = time.perf_counter()
    results = fuzz(opts, corpus)
    return report(results, corpus, opts, time.perf_counter() - start)


if __name__ == "__main__":
    sys.exit(main())
