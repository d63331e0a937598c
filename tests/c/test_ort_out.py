"""The optimised kernels' output stage under `--onnx-numerics ort` (mcu/ort_requant.h
mcu_ort_out: the clamp on the rounded integer, the rounding by adding 1.5 * 2^23 on the host and
FPUs without VRINTR) equals the ort reference kernels' (mcu_ort_requant: float clamp, then
nearbyintf) on every half and quarter step and 2 million pseudo-random inputs within the bound
the build proves (mcugen/codegen/lower/ort_opt.py scaled_fits), under UBSan."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from support import ROOT


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_ort_out_equals_the_reference(tmp_path: Path) -> None:
    exe = tmp_path / "test_ort_out"
    cmd = [
        "gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
        "-fsanitize=undefined", "-fno-sanitize-recover=undefined",
        f"-I{ROOT / 'runtime_c' / 'include'}", str(Path(__file__).with_suffix(".c")),
        "-o", str(exe), "-lm",
    ]  # fmt: skip
    built = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-2000:]
    run = subprocess.run([str(exe), "2000000"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "mismatches 0" in run.stdout and "checked" in run.stdout
