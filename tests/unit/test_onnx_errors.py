"""Bad and unsupported ONNX files: one error line and exit 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from mcugen.cli import main
from support.corrupt import corruptions as damaged
from support.onnx_models import Net, quantized


def run_plan(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["plan", str(path)])
    return code, capsys.readouterr().err


def assert_one_line(code: int, err: str, label: str) -> None:
    if code == 0:
        return  # a flip in weight data leaves a valid model
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mcugen: error: "), f"{label}: {err!r}"
    assert code == 2, f"{label}: exit {code}: {err}"


def corruptions(data: bytes, seed: int) -> list[tuple[str, bytes]]:
    tagged = ("random after an ir_version tag", lambda noise: b"\x08\x08" + noise)
    return damaged(data, seed, cuts=(8, 64), flips=40, randoms=8, tagged=tagged)


def test_corrupt_onnx_files_give_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, _ = quantized("inception", tmp_path, per_channel=True, activations="int8")
    failures = 0
    for label, blob in corruptions(model.read_bytes(), seed=5):
        path = tmp_path / "bad.onnx"
        path.write_bytes(blob)
        code, err = run_plan(path, capsys)
        assert_one_line(code, err, label)
        failures += code != 0
    assert failures >= 20  # most corruptions must be detected, not silently accepted


def test_onnx_is_recognised_without_its_suffix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, _ = quantized("resnet", tmp_path, per_channel=False, activations="uint8")
    renamed = tmp_path / "model.bin"
    renamed.write_bytes(model.read_bytes())
    code, err = run_plan(renamed, capsys)
    assert code == 0, err


def float_model(tmp_path: Path, op: str, **attrs: object) -> Path:
    n = Net(0)
    y = n.node(op, [n.conv("input", 4, 4, (3, 3))], **attrs)
    path = tmp_path / f"{op}.onnx"
    path.write_bytes(n.model((1, 4, 6, 6), "input", y, ()))
    return path


def test_unsupported_operator_named_with_the_supported_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_plan(float_model(tmp_path, "LeakyRelu"), capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "(LeakyRelu)" in err and "operator LeakyRelu is not supported" in err
    assert "supported: " in err and "Conv" in err and "GlobalAveragePool" in err


def test_float_model_refused_with_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_plan(float_model(tmp_path, "Relu"), capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "mcugen quantize" in err


def test_external_data_is_read_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Weights in a side file (PyTorch 2.x's export) plan as the same model inline; a missing,
    truncated or escaping side file is tests/unit/test_onnx_pytorch_export.py's."""
    path, _ = quantized("ds_cnn", tmp_path, per_channel=True, activations="int8")
    m = onnx.load(str(path))
    onnx.save_model(
        m,
        str(tmp_path / "ext.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        size_threshold=64,
    )
    plans = []
    for model in (path, tmp_path / "ext.onnx"):
        assert main(["plan", str(model), "--json"]) == 0
        plans.append(json.loads(capsys.readouterr().out)["arena_bytes"])
    assert plans[0] == plans[1] > 0


def test_dynamic_batch_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = quantized("mobilenet", tmp_path, per_channel=False, activations="int8")
    m = onnx.load(str(path))
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    onnx.save(m, str(path))
    code, err = run_plan(path, capsys)
    assert code == 2 and "dynamic" in err and "fixed input shapes" in err


def test_verify_takes_an_onnx_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The host build against onnxruntime (the default numerics, ort) and, with `--onnx-numerics
    fixed`, against TFLM on the imported graph, through the CLI; the ds_cnn's explicit PAD is
    folded into its convolution by mcugen's rewrites (the reference is the graph before)."""
    path, _ = quantized("ds_cnn", tmp_path, per_channel=False, activations="uint8")
    code = main(["verify", str(path), "--samples", "2"])
    out, err = capsys.readouterr()
    assert code == 0 and "all outputs match onnxruntime" in out, err
    code = main(["verify", str(path), "--samples", "2", "--onnx-numerics", "fixed"])
    out, err = capsys.readouterr()
    assert code == 0 and "all outputs match TFLM" in out, err
    code = main(["run", str(path)])
    out, err = capsys.readouterr()
    assert code == 0 and "output softmax" in out and "int8[1, 6]" in out, out + err


def test_verify_against_onnxruntime_can_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same build with onnxruntime's answer moved one step on one element: verify names
    onnxruntime, the sample and the element, and exits 1."""
    import numpy as np

    from mcugen.link import verify as verify_module

    real = verify_module.onnxruntime_outputs

    def one_off(*args: object) -> list[list[np.ndarray]]:
        outputs = real(*args)  # type: ignore[arg-type]
        first = outputs[1][0].reshape(-1)
        first[3] = np.int8(first[3] ^ 1) if first.dtype == np.int8 else first[3] + 1
        return outputs

    monkeypatch.setattr(verify_module, "onnxruntime_outputs", one_off)
    path, _ = quantized("ds_cnn", tmp_path, per_channel=False, activations="uint8")
    code = main(["verify", str(path), "--samples", "2"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "sample 1" in out + err and "flat index 3" in out + err and "onnxruntime" in out + err


def test_softmax_over_a_spatial_axis_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from support.onnx_models import NETWORKS, Net

    n = Net(0)
    y = n.node("Softmax", [n.conv("input", 4, 4, (3, 3))], axis=2)
    NETWORKS["spatial_softmax"] = lambda seed: (n.model((1, 4, 6, 6), "input", y, ()), (1, 4, 6, 6))
    try:
        path, _ = quantized("spatial_softmax", tmp_path, per_channel=True, activations="int8")
    finally:
        del NETWORKS["spatial_softmax"]
    code, err = run_plan(path, capsys)
    assert code == 2 and "softmax over axis 2 of (1, 4, 6, 6) (only over the channel axis)" in err


def test_onnx_numerics_refused_for_a_tflite_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Naming an ONNX model's numerics for a .tflite model is one line and exit 2, whatever the
    command; the default numerics (none named) leave a .tflite model as it is."""
    from mcugen.model.builder import GraphBuilder

    b = GraphBuilder("tiny")
    x = b.input((1, 4), "int8", scale=0.5, zero_point=0)
    y = b.activation((1, 4), "int8", scale=0.5, zero_point=0)
    b.op("RELU", [x], [y])
    b.output(y)
    model = tmp_path / "tiny.tflite"
    model.write_bytes(b.tflite())
    for command in ("plan", "run", "export"):
        extra = ["-o", str(tmp_path / "out")] if command == "export" else []
        code = main([command, str(model), "--onnx-numerics", "ort", *extra])
        out, err = capsys.readouterr()
        assert code == 2 and "applies to ONNX models only" in err, (command, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert main(["plan", str(model)]) == 0
