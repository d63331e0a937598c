"""`mcugen quantize`: a float ONNX model and calibration samples in, a QDQ model every other
command takes out; bad calibration data is one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from support.onnx_models import NETWORKS, quantized


def float_resnet(tmp_path: Path) -> Path:
    model, _ = NETWORKS["resnet"](0)
    path = tmp_path / "resnet_float.onnx"
    path.write_bytes(model)
    return path


@pytest.mark.parametrize("shape", [(12, 1, 3, 8, 8), (12, 3, 8, 8)])
def test_quantized_model_runs_on_the_host(
    shape: tuple[int, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Samples with or without the batch axis of 1; the result verifies against onnxruntime
    (the default numerics, ort)."""
    data = tmp_path / "calib.npz"
    np.savez(data, input=np.random.default_rng(0).normal(size=shape).astype(np.float32))
    out = tmp_path / "resnet_int8.onnx"
    args = ["quantize", str(float_resnet(tmp_path)), "--data", str(data), "-o", str(out)]
    assert main([*args, "--activations", "uint8"]) == 0, capsys.readouterr().err
    assert "calibrated on 12 samples" in capsys.readouterr().out
    assert main(["verify", str(out), "--samples", "2"]) == 0
    assert "all outputs match onnxruntime" in capsys.readouterr().out


def test_bad_calibration_data_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, out = float_resnet(tmp_path), tmp_path / "q.onnx"
    cases = {
        "missing.npz": None,
        "wrong_shape.npz": {"input": np.zeros((4, 3, 9, 8), np.float32)},
        "wrong_name.npz": {"x": np.zeros((4, 3, 8, 8)), "y": np.zeros(1)},
    }
    for name, arrays in cases.items():
        data = tmp_path / name
        if arrays is not None:
            np.savez(data, **arrays)
        code = main(["quantize", str(model), "--data", str(data), "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, (name, err)
        assert not out.exists()


def test_a_quantized_model_is_not_quantized_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = quantized("resnet", tmp_path, per_channel=True, activations="int8")
    data = tmp_path / "calib.npz"
    np.savez(data, input=np.zeros((2, 3, 8, 8), np.float32))
    code = main(["quantize", str(path), "--data", str(data), "-o", str(tmp_path / "again.onnx")])
    assert code == 2 and "the model is quantized already" in capsys.readouterr().err
