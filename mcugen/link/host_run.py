"""Run a host build on numpy inputs and read its outputs back."""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcugen import progress
from mcugen.errors import RunError
from mcugen.model.ir import DTYPES, Graph

_RESULT = re.compile(r"^mcu-result status=(\S+)(.*)$", re.M)


@dataclass(frozen=True)
class HostRun:
    outputs: list[list[np.ndarray]]  # [sample][output index]
    seconds: float
    result_line: str
    state: bytes | None = None  # the variable tensors after the last sample, when asked for


def run_host(
    exe: Path,
    graph: Graph,
    samples: list[list[np.ndarray]],
    *,
    timeout: float = 300.0,
    state: bool = False,
) -> HostRun:
    """Run `samples` (each: one array per model input) through the executable in one process;
    with `state`, also read back the variable tensors as the last sample left them."""
    blob = bytearray()
    for sample in samples:
        for t_index, arr in zip(graph.inputs, sample, strict=True):
            t = graph.tensors[t_index]
            blob += np.ascontiguousarray(arr, dtype=DTYPES[t.dtype][0]).reshape(t.shape).tobytes()
    with tempfile.TemporaryDirectory(prefix="mcugen-run-") as tmp:
        fin, fout, fstate = Path(tmp) / "in.bin", Path(tmp) / "out.bin", Path(tmp) / "state.bin"
        fin.write_bytes(bytes(blob))
        start = time.perf_counter()
        args = [str(exe), str(fin), str(fout)] + ([str(fstate)] if state else [])
        try:
            with progress.step(f"running on the host, {len(samples):,} samples"):
                proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RunError(
                f"the model did not finish within {timeout:.0f} s", where=str(exe)
            ) from None
        seconds = time.perf_counter() - start
        match = _RESULT.search(proc.stdout)
        if proc.returncode != 0 or match is None or match.group(1) != "0":
            line = match.group(0) if match else (proc.stderr.strip() or f"exit {proc.returncode}")
            raise RunError(f"the model failed: {line}", where=str(exe))
        raw = fout.read_bytes()
        dumped = fstate.read_bytes() if state else None
    return HostRun(_split_outputs(graph, raw, len(samples)), seconds, match.group(0), dumped)


def _split_outputs(graph: Graph, raw: bytes, count: int) -> list[list[np.ndarray]]:
    result = []
    pos = 0
    for _ in range(count):
        outs = []
        for t_index in graph.outputs:
            t = graph.tensors[t_index]
            outs.append(
                np.frombuffer(raw, dtype=DTYPES[t.dtype][0], count=t.num_elements, offset=pos)
                .reshape(t.shape)
                .copy()
            )
            pos += t.nbytes
        result.append(outs)
    if pos != len(raw):
        raise RunError(f"output file has {len(raw)} bytes, expected {pos}")
    return result


def random_inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    """A seeded random input per model input: full range for integers, N(0, 1) for floats."""
    rng = np.random.default_rng(seed)
    arrays = []
    for t_index in graph.inputs:
        t = graph.tensors[t_index]
        np_dtype = np.dtype(DTYPES[t.dtype][0])
        if np_dtype.kind == "f":
            arr = rng.standard_normal(t.shape).astype(np_dtype)
        elif np_dtype.kind == "b":
            arr = rng.integers(0, 2, t.shape).astype(np_dtype)
        else:
            info = np.iinfo(np_dtype)
            arr = rng.integers(info.min, int(info.max) + 1, t.shape, dtype=np_dtype)
        arrays.append(arr)
    return arrays
