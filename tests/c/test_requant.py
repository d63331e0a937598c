"""The optimised kernels' requantisation (runtime_c/include/mcu/requant.h) equals TFLM's
(mcu/quant.h mcu_mbqm) on edge values and 2 million pseudo-random inputs each for positive and
for negative multipliers (a negative filter scale gives one in [-2^31, -2^30]), under UBSan. The
build gives the matrix-product kernels only non-negative multipliers for now
(opt_mat_mult.kernel_requantizes); the negative half is what widening that needs. The same
program checks the ort kernels' output stage (mcu/ort_requant.h mcu_ort_out against
mcu_ort_requant) on every half and quarter step and 2 million pseudo-random inputs within the
bound mcugen/codegen/lower/ort_opt.py scaled_fits proves."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from support import ROOT


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_requant_equals_the_reference(tmp_path: Path) -> None:
    exe = tmp_path / "test_requant"
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
