"""Paths, the shared model sets, and the full-sweep switch."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

# --- Paths -------------------------------------------------------------------------------------

SHARED_MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"
#: The shared models whose operators keep state across invokes (SVDF and LSTM variables).
STATEFUL_MODELS = (
    "tflm_keyword_scrambled_int8",
    "tflm_micro_speech_lstm_int8",
    "tflm_mnist_lstm_int8",
    "tflm_mnist_lstm_f32",
    "tflm_dtln_int8",
)
#: The int8 MLPerf Tiny models and TFLM's person_detect, in that order: the end-to-end set.
MLPERF_INT8 = (
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
    "mlperf_sww_int8",
    "tflm_person_detect_int8",
)


def example_module(name: str) -> ModuleType:
    """examples/<name>.py (a builder script) as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def benchmark_module(name: str) -> ModuleType:
    """benchmarks/<name>.py as a module, loaded once and registered under its name (so what it
    returns pickles across worker pipes), with benchmarks/ on sys.path for the helper modules it
    imports (as when it runs as a script)."""
    if name not in sys.modules:
        folder = str(ROOT / "benchmarks")
        if folder not in sys.path:
            sys.path.insert(0, folder)
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tiny_cnn_int8.tflite"

# --- Sweeps ------------------------------------------------------------------------------------

#: `MCUGEN_FULL_SWEEP=1` (benchmarks/sweeps.py sets it) runs the long parametrizations whole; the
#: test suite runs each one's core cases, chosen so every operator family, board family and code
#: path the sweep covers is still covered (the suite must stay under 30 minutes on 2 cores).
FULL_SWEEP = os.environ.get("MCUGEN_FULL_SWEEP") == "1"


def sweep(cases: Sequence[Any], core: Callable[[Any], bool]) -> list[Any]:
    """All `cases` under `MCUGEN_FULL_SWEEP=1`, else those `core` keeps."""
    return list(cases) if FULL_SWEEP else [c for c in cases if core(c)]
