"""The bundled default model: reproducible from its script, and bit-exact with TFLM end to end."""

from __future__ import annotations

import importlib.util

from support import ROOT, assert_matches_tflm

EXAMPLES = ROOT / "examples"


def load_example_builder():
    spec = importlib.util.spec_from_file_location("make_tiny_cnn", EXAMPLES / "make_tiny_cnn.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bundled_model_is_reproducible() -> None:
    assert load_example_builder().build() == (EXAMPLES / "tiny_cnn_int8.tflite").read_bytes()


def test_bundled_model_matches_tflm() -> None:
    result = assert_matches_tflm((EXAMPLES / "tiny_cnn_int8.tflite").read_bytes(), samples=5)
    assert result.samples == 5
