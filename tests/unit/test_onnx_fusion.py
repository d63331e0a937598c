"""Where onnxruntime (x86-64) runs quantized nodes in float, and what mcugen says about it
(mcugen/model/onnx_import/fusion.py, docs/onnx.md).

onnxruntime leaves an int8 QDQ group unfused where it cannot convert the tensor to uint8 (one read
by two operators: a residual or branch fork) or where an int8 constant meets a uint8 tensor; there
it runs the float operator, which rounds some outputs otherwise than the fused kernel `--onnx-
numerics ort` reproduces. The detector reads the ONNX graph and must name exactly the nodes
onnxruntime's own optimised graph keeps as float operators. Models quantized by `mcugen quantize`
(uint8 activations, or int8 in the QOperator form) are fused throughout, and mcugen's outputs
equal onnxruntime's on every element."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
import pytest

from mcugen.cli import main
from mcugen.model.load import load_model
from mcugen.model.numerics import float_nodes_of
from mcugen.model.onnx_import.fusion import FUSED_KINDS, float_nodes
from support.onnx_models import NETWORKS, _Calibration, host_agreement, quantized

#: The int8 ResNet's groups onnxruntime 1.32 runs in float: the convolutions and Adds writing a
#: tensor read twice (stem, both residual sums), the convolutions reading one, and the Mul by an
#: int8 constant.
RESNET_INT8_FLOAT = ["conv3", "conv7", "add12", "conv16", "add21", "mul24"]


def onnxruntime_float_nodes(path: Path) -> set[str]:
    """The quantized nodes (a DequantizeLinear input in the model) that onnxruntime's optimised
    graph still runs as float operators of the kinds it fuses."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.optimized_model_filepath = str(path.with_suffix(".optimized.onnx"))
    ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    optimised = onnx.load(options.optimized_model_filepath)
    model = onnx.load(str(path))
    producer = {out: n for n in model.graph.node for out in n.output}
    quantized_nodes = {
        n.name
        for n in model.graph.node
        if any(i in producer and producer[i].op_type == "DequantizeLinear" for i in n.input)
    }
    return {
        n.name
        for n in optimised.graph.node
        if n.op_type in FUSED_KINDS and n.domain in ("", "com.microsoft.nchwc")
    } & quantized_nodes


@pytest.mark.parametrize(
    "net",
    ["resnet", "inception", "unet", "ds_cnn", "one_add", "one_relu", "one_flatten_add", "one_mul"],
)
@pytest.mark.parametrize("act, form", [("int8", "qdq"), ("uint8", "qdq"), ("int8", "qoperator")])
def test_float_nodes_are_the_ones_onnxruntime_leaves_unfused(
    net: str, act: str, form: str, workdir: Path
) -> None:
    path, _ = quantized(net, workdir, per_channel=False, activations=act, form=form)
    ours = {n.name for n in float_nodes(onnx.load(str(path)))}
    assert ours == onnxruntime_float_nodes(path), (net, act, form)
    if act == "uint8" or form == "qoperator":
        assert not ours  # fused throughout
    if (net, act, form) == ("resnet", "int8", "qdq"):
        assert sorted(ours) == sorted(RESNET_INT8_FLOAT)


def test_dedicated_qdq_pairs_do_not_help(tmp_path: Path) -> None:
    """quantize_static's DedicatedQDQPair writes one QuantizeLinear/DequantizeLinear pair per
    reader, sharing their scale and zero point: onnxruntime merges the identical QuantizeLinear
    nodes again, and the same groups stay float."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    model, shape = NETWORKS["resnet"](0)
    source, path = tmp_path / "float.onnx", tmp_path / "dedicated.onnx"
    source.write_bytes(model)
    logging.disable(logging.WARNING)
    quantize_static(
        str(source),
        str(path),
        _Calibration(shape, 16, 1),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        extra_options={"DedicatedQDQPair": True},
    )
    logging.disable(logging.NOTSET)
    nodes = onnx.load(str(path)).graph.node
    assert sum(n.op_type == "QuantizeLinear" for n in nodes) > len(RESNET_INT8_FLOAT) + 6
    ours = {n.name for n in float_nodes(onnx.load(str(path)))}
    assert ours == onnxruntime_float_nodes(path) == set(RESNET_INT8_FLOAT)


def test_the_note_names_the_float_nodes(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One note line on stderr for the plain int8 ResNet (not an error: exit 0), none for the
    uint8 one; `verify` on an input where the outputs differ fails and names the nodes."""
    plain, _ = quantized("resnet", workdir, per_channel=False, activations="int8")
    fused, _ = quantized("resnet", workdir, per_channel=False, activations="uint8")
    assert float_nodes_of(load_model(plain)) == RESNET_INT8_FLOAT
    assert main(["plan", str(plain)]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "note:" in line]
    assert len(notes) == 1 and ", ".join(RESNET_INT8_FLOAT) in notes[0], notes
    assert "runs them in float" in notes[0] and "mcugen quantize" in notes[0]
    assert main(["plan", str(fused)]) == 0
    assert "note:" not in capsys.readouterr().err
    assert main(["plan", str(plain), "--onnx-numerics", "fixed"]) == 0  # TFLM is its reference
    assert "note:" not in capsys.readouterr().err

    # seed 866: onnxruntime's float Conv/Add land two steps away on this input
    assert main(["verify", str(plain), "--samples", "1", "--seed", "866"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and ", ".join(RESNET_INT8_FLOAT) in out, out
    assert "runs them in float" in out and "the differences can come from there" in out, out
    assert main(["verify", str(fused), "--samples", "1", "--seed", "866"]) == 0
    assert "all outputs match onnxruntime" in capsys.readouterr().out


def test_the_note_reaches_the_json_and_the_api(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mcugen plan --json` and `mcugen.api.plan` carry the note the commands print on stderr,
    the same text (float_nodes_note), and the nodes; neither for the uint8 model nor `fixed`."""
    import json

    from mcugen import api

    plain, _ = quantized("resnet", workdir, per_channel=True, activations="int8")
    fused, _ = quantized("resnet", workdir, per_channel=True, activations="uint8")
    assert main(["plan", str(plain), "--json"]) == 0
    captured = capsys.readouterr()
    found = json.loads(captured.out)["onnx_float_nodes"]
    assert found["nodes"] == RESNET_INT8_FLOAT
    assert captured.err.strip().endswith(found["note"]) and "note:" in captured.err
    result = api.plan(str(plain))
    assert result.notes == (found["note"],)
    assert result.report["onnx_float_nodes"] == found
    for quiet in (api.plan(str(fused)), api.plan(str(plain), options={"onnx_numerics": "fixed"})):
        assert quiet.notes == () and "onnx_float_nodes" not in quiet.report


def test_the_plain_int8_resnet_differs_somewhere(workdir: Path) -> None:
    """What the note is about, measured: over 1,000 inputs some outputs of the plain int8 ResNet
    differ from onnxruntime's (docs/onnx.md: 99.90-99.93 % of elements over 2,000)."""
    path, _ = quantized("resnet", workdir, per_channel=False, activations="int8")
    elements, equal = host_agreement(path, samples=1000)
    assert 0.99 * elements < equal < elements


@pytest.mark.parametrize("per_tensor", [False, True])
@pytest.mark.parametrize("args", [[], ["--activations", "int8", "--format", "qoperator"]])
def test_models_mcugen_quantizes_equal_onnxruntime(
    per_tensor: bool, args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ResNet quantized by `mcugen quantize` (uint8 QDQ by default, int8 QOperator; per
    channel and per tensor): no note, and every element of 400 inputs equals onnxruntime's."""
    model, shape = NETWORKS["resnet"](0)
    source, data, out = tmp_path / "f.onnx", tmp_path / "c.npz", tmp_path / "q.onnx"
    source.write_bytes(model)
    np.savez(data, input=np.random.default_rng(1).normal(size=(16, *shape)).astype(np.float32))
    extra = ["--per-tensor"] if per_tensor else []
    assert main(["quantize", str(source), "--data", str(data), "-o", str(out), *args, *extra]) == 0
    assert "note:" not in capsys.readouterr().err
    assert float_nodes_of(load_model(out)) == []
    elements, equal = host_agreement(out, samples=400)
    assert equal == elements == 400 * 3


def test_mcugen_quantize_int8_qdq_gets_the_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, shape = NETWORKS["resnet"](0)
    source, data, out = tmp_path / "f.onnx", tmp_path / "c.npz", tmp_path / "q.onnx"
    source.write_bytes(model)
    np.savez(data, input=np.random.default_rng(1).normal(size=(16, *shape)).astype(np.float32))
    args = ["quantize", str(source), "--data", str(data), "-o", str(out)]
    assert main([*args, "--activations", "int8"]) == 0
    captured = capsys.readouterr()
    assert "int8 activations (qdq)" in captured.out
    assert "note:" in captured.err and ", ".join(RESNET_INT8_FLOAT) in captured.err


@pytest.mark.parametrize("act", ["int8", "uint8"])
def test_an_integer_graph_input(act: str, workdir: Path) -> None:
    """A model taking int8 or uint8 data (its input QuantizeLinear removed): no Q -> DQ pair to
    convert, so onnxruntime runs the first convolution of an int8 input in float."""
    path, _ = quantized("mobilenet", workdir, per_channel=False, activations=act)
    model = onnx.load(str(path))
    q = next(n for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == "input")
    zero = next(t for t in model.graph.initializer if t.name == q.input[2])
    model.graph.node.remove(q)
    model.graph.input[0].name = q.output[0]
    model.graph.input[0].type.tensor_type.elem_type = zero.data_type
    integer = workdir / f"mobilenet_{act}_input.onnx"
    onnx.save(model, str(integer))
    ours = {n.name for n in float_nodes(model)}
    assert ours == onnxruntime_float_nodes(integer) == ({"conv3"} if act == "int8" else set())
