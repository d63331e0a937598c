"""Field-level mutants of quantized ONNX models (the byte-level ones are in test_onnx_errors.py):
attributes, shapes, scales, zero points, operands and node order changed at random, each planned
and generated through the CLI: every mutant is accepted or refused in one line with exit 2, never
an internal error (exit 70) or a traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from mcugen.cli import main
from support.onnx_models import quantized

MUTANTS = 90


def _mutate_initializer(m: onnx.ModelProto, rng: np.random.Generator) -> str:
    init = m.graph.initializer[int(rng.integers(len(m.graph.initializer)))]
    arr = numpy_helper.to_array(init).copy()
    choice = int(rng.integers(4))
    if choice == 0 and arr.dtype == np.float32:
        arr[...] = rng.choice([0.0, -1.0, np.nan, np.inf, 1e-30, 1e30])
    elif choice == 1:
        arr = arr.reshape(-1)[: max(arr.size // 2, 1)]  # fewer values than the shape needs
    elif choice == 2 and arr.dtype == np.int8:
        arr = arr.astype(np.int32)  # another type
    else:
        arr = np.append(arr.reshape(-1), arr.reshape(-1)[:1])
    init.CopyFrom(numpy_helper.from_array(arr, init.name))
    return f"initializer {init.name}"


def _mutate_node(m: onnx.ModelProto, rng: np.random.Generator) -> str:
    node = m.graph.node[int(rng.integers(len(m.graph.node)))]
    choice = int(rng.integers(5))
    if choice == 0 and node.attribute:
        a = node.attribute[int(rng.integers(len(node.attribute)))]
        if a.ints:
            a.ints[int(rng.integers(len(a.ints)))] = int(rng.choice([0, -1, 7, 1000]))
        elif a.type == onnx.AttributeProto.INT:
            a.i = int(rng.choice([0, -1, 5, 1 << 40]))
    elif choice == 1 and node.input:
        node.input[int(rng.integers(len(node.input)))] = str(rng.choice(["", "nope"]))
    elif choice == 2 and len(node.input) > 1:
        del node.input[-1]
    elif choice == 3:
        node.op_type = str(rng.choice(["Relu", "Add", "MaxPool", "Concat", "Flatten"]))
    else:
        other = m.graph.node[int(rng.integers(len(m.graph.node)))]
        node.input.append(other.output[0])
    return f"node {node.name}"


def _mutate_graph(m: onnx.ModelProto, rng: np.random.Generator) -> str:
    choice = int(rng.integers(3))
    if choice == 0:
        dims = m.graph.input[0].type.tensor_type.shape.dim
        dims[int(rng.integers(len(dims)))].dim_value = int(rng.choice([1, 2, 3, 64, 1 << 20]))
        return "input shape"
    if choice == 1:
        nodes = list(m.graph.node)
        i, j = (int(k) for k in rng.integers(len(nodes), size=2))
        nodes[i], nodes[j] = nodes[j], nodes[i]
        del m.graph.node[:]
        m.graph.node.extend(nodes)
        return "node order"
    m.graph.output[0].name = m.graph.node[int(rng.integers(len(m.graph.node)))].output[0]
    return "graph output"


@pytest.mark.parametrize(
    "net, form", [("ds_cnn", "qdq"), ("inception", "qdq"), ("resnet", "qoperator")]
)
def test_field_mutants_are_accepted_or_refused_in_one_line(
    net: str, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = quantized(net, tmp_path, per_channel=True, activations="uint8", form=form)
    seed = onnx.load(str(path))
    rng = np.random.default_rng(11)
    mutate = (_mutate_initializer, _mutate_node, _mutate_graph)
    refused = 0
    for k in range(MUTANTS):
        m = onnx.ModelProto()
        m.CopyFrom(seed)
        label = mutate[k % 3](m, rng)
        bad = tmp_path / "mutant.onnx"
        bad.write_bytes(m.SerializeToString())
        code = main(["plan", str(bad)])
        err = capsys.readouterr().err
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert code in (0, 2), f"mutant {k} ({label}): exit {code}: {err}"
        assert code == 0 or len(lines) == 1, f"mutant {k} ({label}): {err!r}"
        refused += code == 2
    assert refused >= MUTANTS // 3
