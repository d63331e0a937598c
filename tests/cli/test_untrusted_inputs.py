"""The real `mcugen` binary given what a first-time user gives it (issue 31): inputs of another
type or layout, float inputs, sample folders, bad arguments, unsupported operators, a RAM budget
that costs more RAM. Each case checks the exit code and that the error is one line and true."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from support import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


# --- Inputs of another type or layout -----------------------------------------------------------

INPUT_COMMANDS = {
    "run": ["run", "model.tflite", "--input"],
    "verify": ["verify", "model.tflite", "--input"],
    "verify --input-dir": ["verify", "model.tflite", "--input-dir"],
    "measure": ["measure", "model.tflite", "--board", "nucleo-f767", "--emulate", "--input"],
}
#: The example's input is int8 [1, 32, 32, 3], scale 1/128, zero point 0.
SHAPE = (1, 32, 32, 3)
WRONG_INPUTS: dict[str, tuple[np.ndarray, str]] = {
    "uint8": (np.full(SHAPE, 200, np.uint8), "the array is uint8, the model's input is int8; "
              "subtract 128 for uint8 images"),
    "int16": (np.zeros(SHAPE, np.int16), "the array is int16, the model's input is int8; "
              "convert it: x.astype(np.int8)"),
    "int32 out of range": (np.full(SHAPE, 300, np.int32), "its values do not fit int8"),
    "float32": (np.zeros(SHAPE, np.float32), "quantize it (round(x / 0.0078125) + 0), or add "
                "--quantize-input"),
    "NCHW": (np.zeros((1, 3, 32, 32), np.int8), "shape [1, 3, 32, 32], the model's input is "
             "[1, 32, 32, 3]; it looks channels-first (NCHW)"),
    "no batch": (np.zeros(SHAPE[1:], np.int8), "add the batch dimension"),
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(INPUT_COMMANDS))
@pytest.mark.parametrize("case", sorted(WRONG_INPUTS))
def test_an_input_of_another_type_or_layout_is_refused(
    ws: Workspace, command: str, case: str
) -> None:
    array, message = WRONG_INPUTS[case]
    samples = ws.cwd / "samples"
    samples.mkdir()
    np.save(samples / "x.npy", array)
    path = "samples" if command.endswith("--input-dir") else "samples/x.npy"
    before = ws.state()
    start = time.monotonic()
    line = ws.run(*INPUT_COMMANDS[command], path).one_error_line()
    assert "x.npy, input 0 (image): the array " in line and message in line, line
    assert time.monotonic() - start < 20  # refused before planning and building
    assert ws.state() == before


def test_a_float_input_is_quantized_only_when_asked_and_says_so(ws: Workspace) -> None:
    x = np.linspace(-1.2, 1.2, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE)
    np.save(ws.cwd / "x.npy", x)
    np.save(ws.cwd / "q.npy", np.clip(np.round(x * 128), -128, 127).astype(np.int8))
    for args in (["run", "model.tflite", "--output", "a.npy"], ["verify", "model.tflite"]):
        quantized = ws.run(*args[:2], "--input", "x.npy", "--quantize-input", *args[2:])
        assert quantized.code == 0, quantized.err
        assert "x.npy input 0: float values quantized to int8 with scale 0.0078125, zero " in (
            quantized.err
        )
        assert "all outputs match TFLM" in quantized.out or args[0] == "run"
    assert ws.run("run", "model.tflite", "--input", "q.npy", "--output", "b.npy").code == 0
    assert np.array_equal(np.load(ws.cwd / "a.npy"), np.load(ws.cwd / "b.npy"))


def test_verify_compares_every_sample_of_a_folder(ws: Workspace) -> None:
    samples = ws.cwd / "samples"
    samples.mkdir()
    rng = np.random.default_rng(3)
    for k in range(3):
        np.save(samples / f"s{k}.npy", rng.integers(-128, 128, SHAPE, dtype=np.int8))
    result = ws.run("verify", "model.tflite", "--input-dir", "samples")
    assert result.code == 0 and "3 samples, all outputs match TFLM" in result.out, result.out
    empty = ws.cwd / "empty"
    empty.mkdir()
    assert (
        "no .npy or .npz file"
        in ws.run("verify", "model.tflite", "--input-dir", "empty").one_error_line()
    )


# --- Error lines that are one line and true ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "model.tflite", "--ram-budget", "-5"], "argument --ram-budget: '-5' is not"),
        (["plan"], "the following arguments are required: model"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["verify", "model.tflite", "--samples", "x"], "argument --samples"),
        (["plan", "model.tflite", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        # an option of other commands: the line names them (issue 33)
        (
            ["build", "model.tflite", "-o", "out", "--boards", "nucleo-f767,nucleo-f767"],
            "`mcugen build` does not take --boards; `mcugen plan`, `mcugen run`, `mcugen sweep` do",
        ),
        (
            ["plan", "model.tflite", "--samples=3"],
            "`mcugen plan` does not take --samples; `mcugen verify` does",
        ),
    ],
)
def test_a_bad_argument_is_one_line_without_the_usage(
    ws: Workspace, args: list[str], message: str
) -> None:
    line = ws.run(*args).one_error_line()
    assert message in line and "--help` lists the options" in line, line


def test_ops_lists_what_the_lowerings_register(ws: Workspace) -> None:
    from mcugen.codegen.lower import supported_opcodes

    result = ws.run("ops")
    assert result.code == 0
    listed = [line.split()[0] for line in result.out.splitlines()[2:-1]]
    assert listed == sorted(supported_opcodes()) and "CONV_2D" in listed
    conv = ws.run("ops", "conv_2d").out
    assert "conv_2d_1x1_s8" in conv and "1x1 filter" in conv
    assert "int8, int16, float32" in conv
    assert "`mcugen ops` lists the ones it runs" in ws.run("ops", "NOPE").one_error_line()


def test_ops_marks_the_onnxruntime_numerics_kernels(ws: Workspace) -> None:
    """The operators with an `--onnx-numerics ort` lowering, read from its registry."""
    import json

    from mcugen.codegen.lower._ort import ORT_LOWERINGS

    rows = {r["operator"]: r for r in json.loads(ws.run("ops", "--json").out)}
    assert {code for code, r in rows.items() if r["ort"]} == set(ORT_LOWERINGS)
    assert {"CONV_2D", "ADD", "SOFTMAX", "LOGISTIC", "MEAN"} <= set(ORT_LOWERINGS)
    text = ws.run("ops").out
    marked = [line.split()[0] for line in text.splitlines() if line.endswith("[ort]")]
    assert sorted(marked) == sorted(ORT_LOWERINGS), marked
    assert f"{len(ORT_LOWERINGS)} marked [ort]" in text.splitlines()[-1]
    assert "ort_windows.py" in ws.run("ops", "conv_2d").out
    assert rows["RESHAPE"]["ort"] is None


def test_ops_prints_the_types_each_lowering_declares_and_enforces(ws: Workspace) -> None:
    """Item 15: the element types per operator. They are the ones the registration declares,
    which `lower` checks before the lowering runs: a type outside them is refused naming them."""
    import json

    from mcugen.codegen.lower import LOWERINGS
    from mcugen.model.builder import GraphBuilder

    rows = {r["operator"]: r for r in json.loads(ws.run("ops", "--json").out)}
    for code, row in rows.items():
        declared = set(LOWERINGS[code].types)
        assert row["types"] == ["any"] or set(row["types"]) == declared, code
    assert rows["RELU"]["types"] == ["int8", "float32"]
    assert rows["FILL"]["data_input"] == 1 and rows["RESHAPE"]["types"] == ["any"]
    assert "the types are those of input 1" in ws.run("ops", "fill").out

    b = GraphBuilder()
    x = b.input([1, 4], "uint8", scale=0.5, zero_point=128)
    y = b.activation([1, 4], "uint8", scale=0.5, zero_point=128)
    b.op("RELU", [x], [y])
    b.output(y)
    (ws.cwd / "u8relu.tflite").write_bytes(b.tflite())
    for args in (["build", "-o", "out"], ["verify"], ["run"]):
        line = ws.run(args[0], "u8relu.tflite", "--board", "host", *args[1:]).one_error_line()
        assert "has type uint8; supported: int8, float32" in line, (args, line)
        assert "`mcugen ops RELU` lists the types" in line, (args, line)
    assert not (ws.cwd / "out").exists()


def test_an_unsupported_operator_names_the_command_that_lists_the_supported_ones(
    ws: Workspace,
) -> None:
    from mcugen.model.builder import GraphBuilder

    b = GraphBuilder()
    x = b.input([1, 4], "float32")
    y = b.activation([1, 4], "float32")
    b.op("EXP", [x], [y])
    b.output(y)
    (ws.cwd / "exp.tflite").write_bytes(b.tflite())
    line = ws.run("build", "exp.tflite", "--board", "host", "-o", "out").one_error_line()
    assert "EXP" in line and "`mcugen ops` lists" in line, line


@pytest.mark.parametrize(
    "args",
    [
        ["export", "model.tflite", "-o", "lib", "--board", "nucleo-f767"],
        ["plan", "model.tflite", "--board", "nucleo-f767"],
        ["build", "model.tflite", "--board", "nucleo-f767", "-o", "fw"],
    ],
)
def test_a_ram_budget_that_costs_more_ram_is_refused(ws: Workspace, args: list[str]) -> None:
    """On a board without external RAM the paged-out buffers stay in RAM: a schedule taking more
    RAM in all than the plain arena (here 4,096 + 2,048 > 5,184) is refused, not adopted."""
    before = ws.state()
    line = ws.run(*args, "--ram-budget", "4096").one_error_line()
    assert "in all with the input copy, no less than the" in line, line
    assert ws.state() == before
