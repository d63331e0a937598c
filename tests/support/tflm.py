"""Comparing mcugen with TFLM: host builds, stateful models, and the QEMU twins."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from mcugen import reference
from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import RunError
from mcugen.firmware.compile import build
from mcugen.link.device_run import DeviceRun, open_device, run_samples
from mcugen.link.host_run import random_inputs, run_host
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import Generated, generate

# --- Comparing mcugen's host build with TFLM ---------------------------------------------------


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


def assert_state_carried_as_tflm(model: bytes, seed: int) -> None:
    """The same seeded input five times through one interpreter: TFLM's outputs change (the
    state carries over), and mcugen's outputs (and the state, if exposed) equal TFLM's each time."""
    repeated = [random_inputs(import_model(model), seed)] * 5
    ref = tflm_outputs(model, repeated)
    assert any(not np.array_equal(ref[0][0], r[0]) for r in ref[1:])
    assert_matches_tflm(model, inputs=repeated)


tflm_arena_head = reference.tflm_arena_head


#: Tests that build firmware and run it on a QEMU twin.
NEEDS_TWIN = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (scripts/install.sh)",
)


def run_twin_against_tflm(
    target: Target,
    elf: Path,
    model: bytes,
    graph: Graph,
    seeds: Sequence[int],
    varied: bool = False,
) -> DeviceRun:
    """Run seeded random inputs through `elf` on the emulated `target`; every output equals
    TFLM's bit for bit (and, if `varied`, is not constant: that would hide a wrong kernel)."""
    samples = [random_inputs(graph, s) for s in seeds]
    with open_device(target, elf, None) as link:
        run = run_samples(link, graph, samples, emulated=True)
    ref = reference.tflm_outputs(model, graph, samples)
    for k, (ours, theirs) in enumerate(zip(run.outputs, ref, strict=True)):
        for j, (o, r) in enumerate(zip(ours, theirs, strict=True)):
            assert np.array_equal(o, r.reshape(o.shape)), f"sample {k} output {j} differs"
            assert not varied or len(np.unique(o)) > 1, f"sample {k} output {j} is constant"
    return run


def exact_on_twin(
    gen: Generated, model: bytes, target: Target, out_dir: Path, seeds: Sequence[int] = (0, 1)
) -> DeviceRun:
    """`gen` built in `out_dir` for the emulated `target`: its outputs on seeded inputs equal
    TFLM's bit for bit, and none is constant."""
    result = build(gen, target, out_dir)
    return run_twin_against_tflm(target, result.executable, model, gen.graph, seeds, varied=True)


def one_line_error(call: Callable[[], object], bound_s: float) -> str:
    """The RunError `call` raises within `bound_s` seconds, as its one line."""
    start = time.monotonic()
    with pytest.raises(RunError) as caught:
        call()
    assert time.monotonic() - start < bound_s
    line = caught.value.line()
    assert "\n" not in line
    return line
