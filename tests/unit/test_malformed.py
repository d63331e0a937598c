"""Bad input files: every one gets one clear error line and a non-zero exit, never a traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.model.builder import GraphBuilder
from support import SHARED_MODELS, floor_model
from support.corrupt import corruptions as damaged


def small_model() -> bytes:
    rng = np.random.default_rng(1)
    b = GraphBuilder()
    x = b.input((1, 16), "int8", scale=0.1, zero_point=3)
    h = b.activation((1, 8), "int8", scale=0.2, zero_point=-1)
    y = b.activation((1, 4), "int8", scale=0.3, zero_point=0)
    w1 = b.const(rng.integers(-127, 128, (8, 16), dtype=np.int8), scale=0.01)
    w2 = b.const(rng.integers(-127, 128, (4, 8), dtype=np.int8), scale=0.01)
    b.op("FULLY_CONNECTED", [x, w1, -1], [h], fused_activation_function=1)
    b.op("FULLY_CONNECTED", [h, w2, -1], [y])
    b.output(y)
    return b.tflite()


def corruptions(data: bytes, seed: int) -> list[tuple[str, bytes]]:
    return damaged(
        data,
        seed,
        cuts=(8, 16, 64),
        flips=60,
        randoms=10,
        tagged=("random with TFL3 header", lambda noise: noise[:4] + b"TFL3" + noise[8:]),
        extra=[("wrong identifier", data[:4] + b"XXXX" + data[8:])],
    )


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean_outcome(code: int, err: str, label: str) -> None:
    if code == 0:
        return  # a flip in weight data leaves a valid model
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"{label}: expected one error line, got {err!r}"
    assert lines[0].startswith("mcugen: error: "), f"{label}: {lines[0]}"
    assert "Traceback" not in err
    assert code not in (1, 70), f"{label}: exit {code} means an unexpected exception: {err}"


def test_corrupt_files_give_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = small_model()
    failures = 0
    for label, blob in corruptions(data, seed=7):
        path = tmp_path / "bad.tflite"
        path.write_bytes(blob)
        code, _, err = run_cli(["plan", str(path)], capsys)
        assert_clean_outcome(code, err, label)
        failures += code != 0
    assert failures >= 30  # most corruptions must be detected, not silently accepted


def test_corrupt_files_build_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Through codegen and the C compiler too: corrupt models fail with one line or run."""
    data = small_model()
    for n, (label, blob) in enumerate(corruptions(data, seed=11)[::6]):
        path = tmp_path / "bad.tflite"
        path.write_bytes(blob)
        out_dir = tmp_path / f"out{n}"
        code, _, err = run_cli(["build", str(path), "--board", "host", "-o", str(out_dir)], capsys)
        assert_clean_outcome(code, err, label)
        if code != 0:
            assert not out_dir.exists(), f"{label}: a failed build left {out_dir}"


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
def test_corrupt_real_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = (SHARED_MODELS / "mlperf_kws_dscnn_int8.tflite").read_bytes()
    for label, blob in corruptions(data, seed=3)[:40]:
        path = tmp_path / "bad.tflite"
        path.write_bytes(blob)
        code, _, err = run_cli(["plan", str(path)], capsys)
        assert_clean_outcome(code, err, label)


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["plan", "does/not/exist.tflite"], capsys)
    assert code == 2 and err.startswith("mcugen: error:") and "not found" in err


def test_unsupported_operator_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = floor_model(tmp_path)
    code, _, err = run_cli(["build", str(path), "-o", str(tmp_path / "out")], capsys)
    assert code == 2
    assert "operator 0 (FLOOR)" in err and "not supported" in err
    assert not (tmp_path / "out").exists()


def test_custom_operator_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    b = GraphBuilder()
    x = b.input((1, 4), "float32")
    y = b.activation((1, 4), "float32")
    b.op("CUSTOM", [x], [y])
    g = b.graph()
    op = replace(g.operators[0], custom_code="MyOp")
    g = replace(g, operators=(op,))
    from mcugen.model.tflite_write import write_model

    path = tmp_path / "custom.tflite"
    path.write_bytes(write_model(g))
    code, _, err = run_cli(["build", str(path), "-o", str(tmp_path / "out")], capsys)
    assert code == 2 and "CUSTOM:MyOp" in err and "custom operator MyOp is not supported" in err
