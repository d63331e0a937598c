"""Shared test helpers: build a model with mcugen for the host, run it, compare with TFLM."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcugen.boards import load_board
from mcugen.host.host_run import random_inputs, run_host
from mcugen.host.project import build
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


@dataclass(frozen=True)
class Comparison:
    samples: int
    max_abs_diff: float
    max_rel_diff: float
    mismatches: list[str]


def tflm_outputs(model: bytes, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """TFLM's outputs; the arena is sized from mcugen's own plan (TFLM's default of ten times the
    file size is too small for small models with large activations)."""
    from tflite_micro import runtime

    graph = import_model(model, source="test model")
    activations = sum(graph.tensors[t].nbytes for t in graph.activation_tensors())
    arena = max(len(model) * 10, 4 * activations + 64 * 1024)
    interp = runtime.Interpreter.from_bytes(model, arena_size=arena)
    result = []
    for sample in samples:
        for i, arr in enumerate(sample):
            interp.set_input(arr, i)
        interp.invoke()
        result.append([np.array(interp.get_output(j)) for j in range(len(graph.outputs))])
    return result


def mcugen_outputs(model: bytes, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    graph = import_model(model, source="test model")
    gen = generate(graph)
    with tempfile.TemporaryDirectory(prefix="mcugen-test-") as tmp:
        result = build(gen, load_board("host"), Path(tmp) / "proj")
        return run_host(result.executable, graph, samples).outputs


def compare_with_tflm(
    model: bytes,
    *,
    samples: int = 5,
    seed: int = 0,
    rtol: float = 1e-5,
    inputs: list[list[np.ndarray]] | None = None,
) -> Comparison:
    """Run `samples` seeded random inputs through mcugen's host build and TFLM; compare outputs.

    Integer outputs must be identical; float outputs within `rtol` relative (with an absolute floor
    of rtol times the largest reference magnitude, for values near zero).
    """
    graph = import_model(model, source="test model")
    inputs = inputs or [random_inputs(graph, seed + k) for k in range(samples)]
    ours = mcugen_outputs(model, inputs)
    ref = tflm_outputs(model, inputs)
    mismatches = []
    max_abs = max_rel = 0.0
    for k, (o_sample, r_sample) in enumerate(zip(ours, ref, strict=True)):
        for j, (o, r) in enumerate(zip(o_sample, r_sample, strict=True)):
            r = r.reshape(o.shape)
            if o.dtype.kind == "f":
                diff = np.abs(o.astype(np.float64) - r.astype(np.float64))
                scale = float(np.max(np.abs(r))) if r.size else 0.0
                max_abs = max(max_abs, float(diff.max(initial=0)))
                rel = diff / np.maximum(np.abs(r), 1e-30)
                max_rel = max(max_rel, float(rel.max(initial=0)))
                bad = diff > rtol * np.abs(r) + rtol * scale
            else:
                bad = o != r
                if bad.any():
                    max_abs = max(max_abs, float(np.abs(o.astype(np.int64) - r).max()))
            if bad.any():
                first = int(np.flatnonzero(bad.ravel())[0])
                mismatches.append(
                    f"sample {k} output {j}: {int(bad.sum())}/{bad.size} differ, first at flat "
                    f"index {first}: mcugen {o.ravel()[first]} vs TFLM {r.ravel()[first]}"
                )
    return Comparison(len(inputs), max_abs, max_rel, mismatches)


def assert_matches_tflm(model: bytes, **kwargs: object) -> Comparison:
    result = compare_with_tflm(model, **kwargs)  # type: ignore[arg-type]
    assert not result.mismatches, "\n".join(result.mismatches[:5])
    return result


def tflm_arena_head(model_path: Path) -> int:
    """TFLM's planned activation bytes ("Arena allocation head"), measured in a subprocess because
    the interpreter prints its allocation report from C to the process's stdout."""
    import re
    import subprocess
    import sys

    code = (
        "import sys\nfrom tflite_micro import runtime\n"
        "ip = runtime.Interpreter.from_file(sys.argv[1])\nip.print_allocations()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(model_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    match = re.search(r"Arena allocation head (\d+) bytes", proc.stdout + proc.stderr)
    assert match, proc.stdout[-500:]
    return int(match.group(1))
