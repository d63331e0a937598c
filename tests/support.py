"""Shared test helpers: build a model with mcugen for the host, run it, compare with TFLM."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from mcugen import reference
from mcugen.boards import load_board, resolve_target
from mcugen.host.host_run import random_inputs, run_host
from mcugen.host.project import build
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import Generated, generate

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
ROOT = Path(__file__).resolve().parents[1]
#: Host C test drivers: strict warnings, AddressSanitizer and UBSan, stop at the first report.
SANITIZED_FLAGS = [
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-g",
]


def build_allocator_driver(driver_source: str, exe: Path) -> Path:
    """Compile tests/c/`driver_source` with runtime_c/src/allocator.c under the sanitizers;
    skips the test when the machine has no gcc."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    sources = [ROOT / "tests/c" / driver_source, ROOT / "runtime_c/src/allocator.c"]
    include = f"-I{ROOT / 'runtime_c/include'}"
    cmd = ["gcc", *SANITIZED_FLAGS, include, *map(str, sources), "-o", str(exe)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe


@dataclass(frozen=True)
class Comparison:
    samples: int
    max_abs_diff: float
    max_rel_diff: float
    mismatches: list[str]


def tflm_outputs(model: bytes, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    return reference.tflm_outputs(model, import_model(model, source="test model"), samples)


def mcugen_outputs(
    model: bytes,
    samples: list[list[np.ndarray]],
    generate_fn: Callable[[Graph], Generated] = generate,
) -> list[list[np.ndarray]]:
    """`generate_fn` turns the imported graph into C (e.g. after rewrites and aliasing)."""
    gen = generate_fn(import_model(model, source="test model"))
    with tempfile.TemporaryDirectory(prefix="mcugen-test-") as tmp:
        result = build(gen, resolve_target(load_board("host"), emulate=False), Path(tmp) / "proj")
        return run_host(result.executable, gen.graph, samples).outputs


def compare_with_tflm(
    model: bytes,
    *,
    samples: int = 5,
    seed: int = 0,
    rtol: float = 1e-5,
    inputs: list[list[np.ndarray]] | None = None,
    generate_fn: Callable[[Graph], Generated] = generate,
) -> Comparison:
    """Run `samples` seeded random inputs through mcugen's host build and TFLM; compare outputs.

    Integer outputs must be identical; float outputs within `rtol` relative (with an absolute floor
    of rtol times the largest reference magnitude, for values near zero).
    """
    graph = import_model(model, source="test model")
    inputs = inputs or [random_inputs(graph, seed + k) for k in range(samples)]
    ours = mcugen_outputs(model, inputs, generate_fn)
    ref = tflm_outputs(model, inputs)
    mismatches = []
    max_abs = max_rel = 0.0
    for k, (o_sample, r_sample) in enumerate(zip(ours, ref, strict=True)):
        for j, (o, r) in enumerate(zip(o_sample, r_sample, strict=True)):
            r = r.reshape(o.shape)
            diff = np.abs(o.astype(np.float64) - r.astype(np.float64))
            max_abs = max(max_abs, float(diff.max(initial=0)))
            max_rel = max(max_rel, float((diff / np.maximum(np.abs(r), 1e-30)).max(initial=0)))
            found = reference.first_difference(o, r, rtol)
            if found is not None:
                count, first = found
                mismatches.append(
                    f"sample {k} output {j}: {count}/{o.size} differ, first at flat index "
                    f"{first}: mcugen {o.ravel()[first]} vs TFLM {r.ravel()[first]}"
                )
    return Comparison(len(inputs), max_abs, max_rel, mismatches)


def assert_matches_tflm(model: bytes, **kwargs: object) -> Comparison:
    result = compare_with_tflm(model, **kwargs)  # type: ignore[arg-type]
    assert not result.mismatches, "\n".join(result.mismatches[:5])
    return result


tflm_arena_head = reference.tflm_arena_head
