"""Same model, same options, same bytes: `mcugen plan --json` of every generated graph and shared
model, run three times (the second with every core kept busy by other processes), must give
byte-identical output (plan search budgets are counted in work, not read from a clock).
Run: python benchmarks/determinism.py [--runs 3]; exit 1 on any difference.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcugen.model.tflite_write import write_model
from testgraphs import benchmark_suite

ROOT = Path(__file__).resolve().parents[1]
SHARED_MODELS = ROOT.parent / "shared" / "models"


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@contextmanager
def cpu_load(seconds: float = 3600.0) -> Iterator[None]:
    """Every core busy with a spinning process until the block ends."""
    workers = [
        multiprocessing.Process(target=_spin, args=(seconds,), daemon=True)
        for _ in range(multiprocessing.cpu_count())
    ]
    for w in workers:
        w.start()
    try:
        yield
    finally:
        for w in workers:
            w.terminate()
            w.join()


def plan_json(model: Path) -> bytes:
    cmd = [sys.executable, "-m", "mcugen.cli", "plan", str(model), "--json"]
    return subprocess.run(cmd, capture_output=True, check=False, timeout=600).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcugen-determinism-") as tmp:
        models = []
        for name, build in benchmark_suite():
            path = Path(tmp) / f"{name}.tflite"
            path.write_bytes(write_model(build()))
            models.append(path)
        models += sorted(SHARED_MODELS.glob("*.tflite")) if SHARED_MODELS.is_dir() else []
        digests: dict[str, list[str]] = {m.stem: [] for m in models}
        for run in range(args.runs):
            loaded = run == 1
            started = time.perf_counter()
            with cpu_load() if loaded else _nothing():
                for model in models:
                    digests[model.stem].append(hashlib.sha256(plan_json(model)).hexdigest()[:12])
            label = "under load" if loaded else "idle"
            print(f"run {run + 1} ({label}): {time.perf_counter() - started:.0f} s")
    differ = [name for name, d in digests.items() if len(set(d)) != 1]
    print("| model | sha256 of plan --json per run | |")
    print("|---|---|---|")
    for name, d in digests.items():
        print(f"| {name} | {' '.join(d)} | {'DIFFERS' if name in differ else 'identical'} |")
    print(
        f"{len(models) - len(differ)} of {len(models)} models byte-identical over {args.runs} runs"
    )
    return 1 if differ else 0


@contextmanager
def _nothing() -> Iterator[None]:
    yield


if __name__ == "__main__":
    sys.exit(main())
