"""The long test sweeps the suite runs only in part (tests/support/paths.py `sweep`, `FULL_SWEEP`).

The test suite must stay under 30 minutes on 2 cores, so each long parametrization runs its core
cases there (every operator family, board family and code path is still covered); this script runs
the same tests whole, with `MCUGEN_FULL_SWEEP=1`: every shared model under each allocator on the
twin and on the host, every board's fit verdict against the linker with every model, every
branchy model on 2, 3 and 4 twins, every MLPerf model's strict export build, power cuts at 5
random points of a checkpoint save, deeplabv3 and mobilenet_v2 against TFLM with and without
rewrites, six shared models with patch stages, and the Hypothesis tests (the optimised kernels'
variants and the gradients against JAX among them) and the fuzz share at their full sizes, with
new Hypothesis examples each run (the suite draws the same ones every time). It prints pytest's
summary and exits with its status. About 45 minutes on 2 cores.
Run: python benchmarks/sweeps.py [-n JOBS] [-k EXPRESSION]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = (
    "tests/qemu/test_qemu_allocators.py::test_shared_models_allocators_bit_exact",
    "tests/qemu/test_qemu_allocators.py::test_generated_graphs_allocators_bit_exact",
    "tests/planners/test_allocators.py::test_real_models_bit_exact",
    "tests/unit/test_fit.py::test_the_verdict_equals_the_linked_firmware_ram_to_the_byte",
    "tests/qemu/test_multiboard.py::test_branchy_models_exact",
    "tests/planners/test_plan.py::test_every_strategy_gives_a_valid_plan",
    "tests/planners/test_order.py::test_optimal_matches_brute_force",
    "tests/planners/test_order.py::test_every_strategy_gives_a_valid_order",
    "tests/planners/test_order.py::test_optimal_beats_greedy_beats_stored",
    "tests/train/test_schedule.py::test_the_lower_bound_never_exceeds_the_optimum",
    "tests/unit/test_fuzz.py::test_fuzz_ci_share",
    "tests/kernels/test_opt_variants.py",
    "tests/kernels/test_opt_conv.py",
    "tests/kernels/test_opt_depthwise.py",
    "tests/train/test_grad_pool.py",
    "tests/train/test_grad_conv.py",
    "tests/train/test_gradients.py",
    "tests/c/test_export_c.py::test_mlperf_exports_compile_strict_everywhere",
    "tests/qemu/test_checkpoint_twin.py::test_a_power_cut_anywhere_in_a_save_leaves_the_last_checkpoint",
    "tests/kernels/test_models.py::test_real_model_matches_tflm",
    "tests/planners/test_rewrite.py::test_real_model_bit_exact_with_rewrites_and_aliasing",
    "tests/kernels/test_patch_stages.py::test_shared_model_with_patches_matches_tflm",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", default="auto", help="pytest-xdist workers (default auto)")
    parser.add_argument("-k", default="", help="only the tests pytest's -k selects")
    args = parser.parse_args(argv)
    command = [sys.executable, "-m", "pytest", "-q", "-n", args.n, *SWEEPS]
    if args.k:
        command += ["-k", args.k]
    env = {**os.environ, "MCUGEN_FULL_SWEEP": "1"}
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
