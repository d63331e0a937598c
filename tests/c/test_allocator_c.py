"""The compacting allocator's C source (runtime_c/src/allocator.c) under a random host driver
(tests/c/test_allocator.c) with AddressSanitizer and UBSan: contents preserved across every
compaction, no overlap, aligned offsets, arena within the peak live bytes, moved bytes counted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import build_allocator_driver


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("allocator") / "test_allocator"
    return build_allocator_driver("test_allocator.c", exe)


@pytest.mark.parametrize("seed", [1, 2, 3, 17, 2026])
def test_compacting_allocator_random_sequences(driver: Path, seed: int) -> None:
    run = subprocess.run([str(driver), str(seed), "300"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"allocator test seed {seed}: 300 plans" in run.stdout
    assert run.stdout.rstrip().endswith(" 0 failures")
    steps = int(run.stdout.split(" steps,")[0].rsplit(" ", 1)[1])
    assert steps > 5000, run.stdout
