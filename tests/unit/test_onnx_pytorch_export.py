"""What PyTorch 2.x's ONNX exporter writes, from `torch.onnx.export` to firmware (docs/onnx.md),
without PyTorch in the test environment: the same constructs built with onnx.helper.

- Weights in a side file (`model.onnx.data`, external data): read in by every command and by
  `mcugen quantize`; a missing, truncated or escaping data file is one line, exit 2.
- Means over the map as ReduceMean over axes 2 and 3 (`x.mean((2, 3))` and
  `nn.AdaptiveAvgPool2d(1)` alike; the axes an attribute before opset 18, an input from it),
  with keepdims 0 or followed by a flattening Reshape (`allowzero=1`, as `view` exports it).
  onnxruntime runs a quantized ReduceMean in float, so a model quantized as it is agrees on most
  but not all outputs and the note says why; `mcugen quantize` writes it as GlobalAveragePool,
  which onnxruntime fuses, and the outputs agree on every element."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from mcugen.cli import main
from support.onnx_models import Net, host_agreement


def float_net(opset: int, mean: str, seed: int = 3) -> bytes:
    """A DS-CNN-like float network ending in a mean over the map then a Gemm: `mean` is
    "keepdims0" (ReduceMean dropping the axes) or "reshape" (keeping them, then a Reshape with
    allowzero=1 to (1, C))."""
    n = Net(seed)
    y = n.conv("input", 1, 16, (5, 3), stride=2, act="relu")
    y = n.conv(y, 16, 16, (3, 3), group=16, act="relu")
    z = n.conv(y, 16, 16, (1, 1), act="relu")
    y = n.node("Add", [y, z])
    keep = 0 if mean == "keepdims0" else 1
    if opset >= 18:
        y = n.node("ReduceMean", [y, n.const(np.array([2, 3], np.int64), "axes")], keepdims=keep)
    else:
        y = n.node("ReduceMean", [y], axes=[2, 3], keepdims=keep)
    if keep:
        y = n.node("Reshape", [y, n.const(np.array([1, 16], np.int64), "shape")], allowzero=1)
    y = n.gemm(y, 16, 6)
    graph = helper.make_graph(
        n.nodes,
        "net",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 20, 10])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 6])],
        n.inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m.SerializeToString()


def with_side_file(buf: bytes, path: Path) -> Path:
    """`buf` saved as PyTorch 2.x saves it: every tensor in `<name>.data` beside it."""
    model = onnx.ModelProto()
    model.ParseFromString(buf)
    onnx.save_model(
        model,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=f"{path.name}.data",
        size_threshold=0,
    )
    assert (path.parent / f"{path.name}.data").stat().st_size > 0
    return path


def calibration(tmp_path: Path) -> Path:
    data = tmp_path / "calib.npz"
    rng = np.random.default_rng(0)
    np.savez(data, input=rng.normal(size=(16, 1, 20, 10)).astype(np.float32))
    return data


@pytest.mark.parametrize(("opset", "mean"), [(13, "keepdims0"), (18, "reshape")])
def test_exported_model_quantizes_plans_and_matches_onnxruntime(
    opset: int, mean: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = with_side_file(float_net(opset, mean), tmp_path / "model_float.onnx")
    out = tmp_path / "model_int8.onnx"
    args = ["quantize", str(model), "--data", str(calibration(tmp_path)), "-o", str(out)]
    assert main(args) == 0, capsys.readouterr().err
    said = capsys.readouterr()
    assert "1 ReduceMean over H and W written as GlobalAveragePool" in said.out
    assert "unfused" not in said.err  # onnxruntime fuses the whole model
    quantized = onnx.load(str(out))
    assert "GlobalAveragePool" in {n.op_type for n in quantized.graph.node}
    assert "ReduceMean" not in {n.op_type for n in quantized.graph.node}
    elements, equal = host_agreement(out, samples=40)
    assert equal == elements
    assert main(["plan", str(out)]) == 0


def test_a_quantized_reduce_mean_imports_and_the_note_says_onnxruntime_runs_it_in_float(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Quantized by onnxruntime directly (not through `mcugen quantize`): the ReduceMean stays,
    mcugen imports it as MEAN, and says onnxruntime runs it in float; the outputs agree on most
    elements (98.4 % on 500 inputs of a PyTorch export of this shape, measured)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    source = tmp_path / "f.onnx"
    source.write_bytes(float_net(18, "keepdims0"))
    out = tmp_path / "q.onnx"
    samples = np.load(calibration(tmp_path))["input"]

    class Reader:
        def __init__(self) -> None:
            self.it = iter({"input": s[None]} for s in samples)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.it, None)

    logging.disable(logging.WARNING)
    try:
        quantize_static(
            str(source),
            str(out),
            Reader(),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
    finally:
        logging.disable(logging.NOTSET)
    assert "ReduceMean" in {n.op_type for n in onnx.load(str(out)).graph.node}
    assert main(["plan", str(out)]) == 0
    err = capsys.readouterr().err
    assert "operators it has no quantized kernel for" in err and "mcugen quantize" not in err
    elements, equal = host_agreement(out, samples=40)
    assert equal >= 0.9 * elements


def test_side_file_mistakes_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = with_side_file(float_net(13, "keepdims0"), tmp_path / "m.onnx")
    data = tmp_path / "m.onnx.data"
    calib = calibration(tmp_path)
    cases = []
    # the data file missing
    missing = tmp_path / "missing"
    missing.mkdir()
    (missing / "m.onnx").write_bytes(good.read_bytes())
    cases.append((missing / "m.onnx", "not beside the model"))
    # truncated
    short = tmp_path / "short"
    short.mkdir()
    (short / "m.onnx").write_bytes(good.read_bytes())
    (short / "m.onnx.data").write_bytes(data.read_bytes()[:100])
    cases.append((short / "m.onnx", "truncated"))
    # a location outside the model's folder
    model = onnx.load(str(good), load_external_data=False)
    for t in model.graph.initializer:
        for entry in t.external_data:
            if entry.key == "location":
                entry.value = "../m.onnx.data"
    escaping = tmp_path / "escaping"
    escaping.mkdir()
    (escaping / "m.onnx").write_bytes(model.SerializeToString())
    cases.append((escaping / "m.onnx", "outside the model's folder"))
    for path, what in cases:
        out = path.parent / "q.onnx"
        for args in (
            ["quantize", str(path), "--data", str(calib), "-o", str(out)],
            ["plan", str(path)],
        ):
            code = main(args)
            err = capsys.readouterr().err.strip()
            assert code == 2 and len(err.splitlines()) == 1 and what in err, (args, err)
            assert not out.exists()
