"""The compacting allocator's C source (runtime_c/src/allocator.c) under a random host driver
(tests/c/test_allocator.c) with AddressSanitizer and UBSan: contents preserved across every
compaction, no overlap, aligned offsets, arena within the peak live bytes, moved bytes counted."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FLAGS = [
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-g",
]


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    exe = tmp_path_factory.mktemp("allocator") / "test_allocator"
    sources = [ROOT / "tests/c/test_allocator.c", ROOT / "runtime_c/src/allocator.c"]
    cmd = ["gcc", *FLAGS, f"-I{ROOT / 'runtime_c/include'}", *map(str, sources), "-o", str(exe)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe


@pytest.mark.parametrize("seed", [1, 2, 3, 17, 2026])
def test_compacting_allocator_random_sequences(driver: Path, seed: int) -> None:
    run = subprocess.run([str(driver), str(seed), "300"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"allocator test seed {seed}: 300 plans" in run.stdout
    assert run.stdout.rstrip().endswith(" 0 failures")
    steps = int(run.stdout.split(" steps,")[0].rsplit(" ", 1)[1])
    assert steps > 5000, run.stdout
