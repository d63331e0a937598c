"""TFLM's own Python interpreter (`tflite-micro` on PyPI) as the reference for outputs and arena."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from mcugen import progress
from mcugen.errors import McugenError
from mcugen.model.ir import Graph
from mcugen.model.numerics import uses_ort


def _runtime():  # type: ignore[no-untyped-def]
    try:
        from tflite_micro import runtime
    except ImportError:
        raise McugenError(
            "the TFLM reference interpreter is not installed", hint="pip install tflite-micro"
        ) from None
    return runtime


def tflm_outputs(
    model: bytes, graph: Graph, samples: list[list[np.ndarray]]
) -> list[list[np.ndarray]]:
    """TFLM's outputs for each sample. The arena is sized from the graph's activations (TFLM's
    default of ten times the file size is too small for small models with large activations).
    An ONNX import with onnxruntime's numerics has no TFLM reference: refused in one line."""
    if uses_ort(graph):
        raise McugenError(
            "TFLM computes TFLite's numerics, not onnxruntime's (--onnx-numerics ort)",
            hint="compare with onnxruntime (mcugen verify), or import with --onnx-numerics fixed",
        )
    runtime = _runtime()
    activations = sum(graph.tensors[t].nbytes for t in graph.activation_tensors())
    arena = max(len(model) * 10, 4 * activations + 64 * 1024)
    interp = runtime.Interpreter.from_bytes(model, arena_size=arena)
    result = []
    with progress.step("running TFLM's reference interpreter") as step:
        for k, sample in enumerate(samples):
            step.update(f"sample {k + 1} of {len(samples)}")
            for i, arr in enumerate(sample):
                interp.set_input(arr, i)
            interp.invoke()
            result.append([np.array(interp.get_output(j)) for j in range(len(graph.outputs))])
    return result


def tflm_arena_head(model_path: Path) -> int:
    """TFLM's planned activation bytes ("Arena allocation head"), measured in a subprocess because
    the interpreter prints its allocation report from C."""
    _runtime()
    code = (
        "import sys\nfrom tflite_micro import runtime\n"
        "ip = runtime.Interpreter.from_file(sys.argv[1])\nip.print_allocations()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(model_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    match = re.search(r"Arena allocation head (\d+) bytes", proc.stdout + proc.stderr)
    if match is None:
        raise McugenError("TFLM could not plan the model", where=str(model_path))
    return int(match.group(1))


def tflm_graph_head(graph: Graph) -> int:
    """`tflm_arena_head` of `graph`, written as a .tflite to a temporary folder."""
    from mcugen.model.tflite_write import write_model

    with tempfile.TemporaryDirectory(prefix="mcugen-head-") as tmp:
        path = Path(tmp) / "model.tflite"
        path.write_bytes(write_model(graph))
        return tflm_arena_head(path)


def first_difference(ours: np.ndarray, ref: np.ndarray, rtol: float) -> tuple[int, int] | None:
    """(count, flat index of the first) of elements that differ: exactly for integers, beyond
    `rtol` relative (with a floor of rtol times the largest finite magnitude) for floats, where a
    NaN or an infinity matches only the same in the reference."""
    ref = ref.reshape(ours.shape)
    if ours.dtype.kind == "f":
        o, r = ours.astype(np.float64), ref.astype(np.float64)
        finite = np.isfinite(r)
        scale = float(np.max(np.abs(r[finite]))) if finite.any() else 0.0
        with np.errstate(invalid="ignore"):
            near = np.abs(o - r) <= rtol * np.abs(r) + rtol * scale  # False for a NaN in `o`
        bad = np.where(finite, ~near, np.where(np.isnan(r), ~np.isnan(o), o != r))
    else:
        bad = ours != ref
    if not bad.any():
        return None
    return int(bad.sum()), int(np.flatnonzero(bad.ravel())[0])


def onnxruntime_outputs(
    path: str | Path, graph: Graph, samples: list[list[np.ndarray]]
) -> list[list[np.ndarray]]:
    """onnxruntime's outputs (CPU, default graph optimisations) for each int8 sample of the
    ONNX model at `path` imported as `graph`, in mcugen's layout and int8 storage: each input
    dequantized (a float input) or shifted back (a uint8 one) and transposed to NCHW where the
    import stored it NHWC, each float output quantized back with the output's scale and zero
    point (onnxruntime's last DequantizeLinear is exact, so this recovers its integers)."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise McugenError(
            "onnxruntime is not installed (the reference of --onnx-numerics ort)",
            hint="pip install onnxruntime, or verify against TFLM with --onnx-numerics fixed",
        ) from None
    from mcugen.model.onnx_import import NHWC_METADATA

    nhwc = set(graph.metadata.get(NHWC_METADATA, b"").decode().split(","))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    sess = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    result = []
    with progress.step("running onnxruntime") as step:
        for k, sample in enumerate(samples):
            step.update(f"sample {k + 1} of {len(samples)}")
            feeds = {
                spec.name: _ort_input(graph, graph.inputs[i], spec.type, arr, nhwc)
                for i, (spec, arr) in enumerate(zip(sess.get_inputs(), sample, strict=True))
            }
            outs = sess.run(None, feeds)
            pairs = zip(graph.outputs, outs, strict=True)
            result.append([_ort_output(graph, t, np.asarray(o), nhwc) for t, o in pairs])
    return result


def _ort_input(graph: Graph, index: int, kind: str, q: np.ndarray, nhwc: set[str]) -> np.ndarray:
    t = graph.tensors[index]
    assert t.quant is not None
    if kind == "tensor(float)":
        value = (q.astype(np.float32) - np.float32(t.quant.zero_point)) * np.float32(t.quant.scale)
    elif kind == "tensor(uint8)":
        value = (q.astype(np.int16) + 128).astype(np.uint8)
    else:
        value = q.astype(np.int8)
    return value.transpose(0, 3, 1, 2) if t.name in nhwc else value


def _ort_output(graph: Graph, index: int, out: np.ndarray, nhwc: set[str]) -> np.ndarray:
    t = graph.tensors[index]
    assert t.quant is not None
    if out.dtype == np.float32:
        q = np.rint(out.astype(np.float64) / np.float32(t.quant.scale)) + t.quant.zero_point
    else:
        q = out.astype(np.int16) - (128 if out.dtype == np.uint8 else 0)
    q = q.transpose(0, 2, 3, 1) if t.name in nhwc else q
    return np.clip(q, -128, 127).astype(np.int8).reshape(t.shape)
