"""`mcugen train` on bad data, through the real binary (issue 31, item 3): each bad file, given
as --data or as --val-data, is one error line naming the file, the array and the first bad
sample, exit 2, no output, and nothing compiled (a compiler launcher that records each call
shows no build started). A run that diverges stops with one line and writes no model."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from support import conv_chain, int8_classifier, synthetic_dataset

MCUGEN = Path(sys.executable).with_name("mcugen")


def float_model(*, softmax: bool, seed: int = 1, depth: int = 16, outputs: int = 4) -> Graph:
    """FULLY_CONNECTED in float32 over a (1, depth) input, then SOFTMAX (a classifier) or not
    (a regressor)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, depth), "float32")
    w = b.const(rng.normal(0, 0.3, (outputs, depth)).astype(np.float32))
    bias = b.const(np.zeros(outputs, np.float32))
    y = b.activation((1, outputs), "float32")
    b.op("FULLY_CONNECTED", [x, w, bias], [y], fused_activation_function=0)
    if softmax:
        probs = b.activation((1, outputs), "float32")
        b.op("SOFTMAX", [y], [probs], beta=1.0)
        y = probs
    b.output(y)
    return b.graph()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The models, a good dataset for each, and a compiler launcher that logs every call."""
    d = tmp_path_factory.mktemp("bad-data")
    rng = np.random.default_rng(4)
    result = {"dir": d}
    int8 = int8_classifier(seed=5)
    x, y = synthetic_dataset(int8, 24, seed=6)
    graphs = {
        "int8": (int8, x, y),
        "float": (
            float_model(softmax=True),
            rng.normal(0, 1, (24, 16)).astype(np.float32),
            rng.integers(0, 4, 24),
        ),
        "regressor": (
            float_model(softmax=False),
            rng.normal(0, 1, (24, 16)).astype(np.float32),
            rng.normal(0, 1, (24, 1, 4)).astype(np.float32),
        ),
        "image": (
            conv_chain(),
            rng.normal(0, 1, (6, 12, 12, 4)).astype(np.float32),
            rng.integers(0, 5, 6),
        ),
    }
    for name, (graph, xs, ys) in graphs.items():
        result[name] = d / f"{name}.tflite"
        result[name].write_bytes(write_model(graph))
        result[f"{name}.npz"] = d / f"{name}.npz"
        np.savez(result[f"{name}.npz"], x=xs, y=ys)
    launcher = d / "cc-launcher"
    launcher.write_text('#!/bin/sh\necho "$@" >> "$TEST_CC_LOG"\nexec "$@"\n')
    launcher.chmod(0o755)
    result["launcher"] = launcher
    return result


def run_train(
    files: dict[str, Path], log: Path, model: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """`mcugen train MODEL --board host ARGS`, each compiler call logged to `log`."""
    env = {**os.environ, "MCUGEN_CC_LAUNCHER": str(files["launcher"]), "TEST_CC_LOG": str(log)}
    env.pop("MCUGEN_DEBUG", None)
    return subprocess.run(
        [str(MCUGEN), "train", str(files[model]), "--board", "host", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("mcugen: error: "), proc.stderr
    assert proc.stdout == ""
    return lines[0]


Arrays = dict[str, Any]


def with_nan(d: Arrays) -> Arrays:
    x = d["x"].copy()
    x[5, 3] = np.nan
    x[9, 0] = np.nan
    return {**d, "x": x}


def with_inf(d: Arrays) -> Arrays:
    x = d["x"].copy()
    x[7, 2] = -np.inf
    return {**d, "x": x}


def label(value: int, at: int) -> Callable[[Arrays], Arrays]:
    def change(d: Arrays) -> Arrays:
        y = d["y"].copy()
        y[at] = value
        return {**d, "y": y}

    return change


def target_nan(d: Arrays) -> Arrays:
    y = d["y"].copy()
    y[4, 0, 2] = np.nan
    return {**d, "y": y}


#: (case, model, the change to its good data, what the line must say)
CASES: list[tuple[str, str, Callable[[Arrays], Arrays], list[str]]] = [
    ("nan", "float", with_nan, ["x[5]: sample 5 holds NaN (2 of 24 samples hold NaN"]),
    ("inf", "float", with_inf, ["x[7]: sample 7 holds an infinity (1 of 24 samples holds"]),
    ("label too large", "int8", label(4, 7), ["y[7]: label 4 of sample 7 is outside", "0 to 3"]),
    ("negative label", "int8", label(-1, 3), ["y[3]: label -1 of sample 3 is outside"]),
    (
        "wrong shape",
        "int8",
        lambda d: {**d, "x": d["x"][:, :15]},
        [", x: samples of shape (15,); the model takes (1, 16)"],
    ),
    (
        "channels first",
        "image",
        lambda d: {**d, "x": np.ascontiguousarray(d["x"].transpose(0, 3, 1, 2))},
        ["samples of shape (4, 12, 12); the model takes (1, 12, 12, 4)", "x.transpose(0, 2, 3, 1)"],
    ),
    (
        "empty",
        "int8",
        lambda d: {"x": d["x"][:0], "y": d["y"][:0]},
        ["the dataset holds no sample (x has 0, y 0)"],
    ),
    ("one label short", "int8", lambda d: {**d, "y": d["y"][:-1]}, ["23 labels for 24 samples"]),
    ("no y", "int8", lambda d: {"x": d["x"]}, ["the dataset has no y (it holds x)"]),
    ("no x", "int8", lambda d: {"y": d["y"]}, ["the dataset has no x (it holds y)"]),
    (
        "uint8 for int8",
        "int8",
        lambda d: {**d, "x": (d["x"].astype(np.int16) + 128).astype(np.uint8)},
        ["samples of type uint8; the model takes int8", "subtract 128"],
    ),
    (
        "float for int8",
        "int8",
        lambda d: {**d, "x": d["x"].astype(np.float32) * 0.05},
        ["samples of type float32; the model takes int8", "mcugen train does not quantize"],
    ),
    (
        "int32 for int8",
        "int8",
        lambda d: {**d, "x": d["x"].astype(np.int32)},
        ["samples of type int32; the model takes int8", "x = x.astype(np.int8)"],
    ),
    (
        "float64 for float32",
        "float",
        lambda d: {**d, "x": d["x"].astype(np.float64)},
        ["samples of type float64; the model takes float32", "x.astype(np.float32)"],
    ),
    (
        "float labels",
        "int8",
        lambda d: {**d, "y": d["y"].astype(np.float32)},
        [", y: labels of type float32", "y = y.astype(np.int64)"],
    ),
    (
        "one-hot labels",
        "int8",
        lambda d: {**d, "y": np.eye(4, dtype=np.float32)[d["y"]]},
        [", y: labels of shape (4,)", "y = y.argmax(axis=1)"],
    ),
    ("NaN target", "regressor", target_nan, ["y[4]: sample 4 holds NaN"]),
    (
        "integer targets",
        "regressor",
        lambda d: {**d, "y": np.zeros(d["y"].shape, np.int64)},
        ["targets of type int64; mean squared error wants float targets"],
    ),
]


@pytest.mark.parametrize("flag", ["--data", "--val-data"])
@pytest.mark.parametrize(("case", "model", "change", "says"), CASES, ids=[c[0] for c in CASES])
def test_bad_data_is_one_line_before_any_build(
    files: dict[str, Path],
    tmp_path: Path,
    case: str,
    model: str,
    change: Callable[[Arrays], Arrays],
    says: list[str],
    flag: str,
) -> None:
    bad = tmp_path / f"{case.replace(' ', '_')}.npz"
    np.savez(bad, **change(dict(np.load(files[f"{model}.npz"]))))
    good = str(files[f"{model}.npz"])
    data = ["--data", str(bad)] if flag == "--data" else ["--data", good, "--val-data", str(bad)]
    out, log = tmp_path / "tuned.tflite", tmp_path / "compiled.log"
    line = one_error_line(run_train(files, log, model, *data, "-o", str(out)))
    assert f"mcugen: error: {bad}" in line, line
    for text in says:
        assert text in line, line
    assert not out.exists()
    assert not log.exists(), "a build started"


def test_files_that_are_not_datasets(files: dict[str, Path], tmp_path: Path) -> None:
    npy, text, log = tmp_path / "plain.npy", tmp_path / "notes.npz", tmp_path / "compiled.log"
    np.save(npy, np.zeros((3, 16), np.int8))
    text.write_text("not numpy\n")
    line = one_error_line(run_train(files, log, "int8", "--data", str(npy)))
    assert f"{npy}: not an .npz but a single array" in line
    line = one_error_line(run_train(files, log, "int8", "--data", str(text)))
    assert f"{text}: not a readable .npz" in line
    line = one_error_line(run_train(files, log, "int8", "--data", str(tmp_path / "nowhere.npz")))
    assert "nowhere.npz: dataset file not found" in line
    assert not log.exists(), "a build started"


def test_good_data_builds_and_writes_the_model(files: dict[str, Path], tmp_path: Path) -> None:
    """The control of the cases above: the same command with good data compiles (the launcher
    logs it) and writes the model."""
    out, log = tmp_path / "tuned.tflite", tmp_path / "compiled.log"
    data = str(files["float.npz"])
    proc = run_train(files, log, "float", "--data", data, "--val-data", data, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.exists() and log.exists()


def test_a_nan_loss_stops_the_run(files: dict[str, Path], tmp_path: Path) -> None:
    """Finite data that a learning rate of 1000 blows up: an update overflows the weights, the
    next step's loss is NaN."""
    good = dict(np.load(files["float.npz"]))
    huge, out = tmp_path / "huge.npz", tmp_path / "tuned.tflite"
    np.savez(huge, x=good["x"] * np.float32(1e18), y=good["y"])
    proc = run_train(
        files, tmp_path / "log", "float", "--data", str(huge), "--lr", "1000", "-o", str(out)
    )
    line = one_error_line(proc)
    step = re.search(
        r"x\[(\d+)\]: training diverged: the loss of epoch 1, step (\d+), is nan", line
    )
    assert step is not None and int(step.group(2)) == int(step.group(1)) + 1, line
    assert f"{huge}, x[" in line and "nothing written; lower --lr" in line
    assert not out.exists()


def test_weights_that_overflow_in_the_last_update_are_not_written(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """One step: its loss is finite, the update it makes overflows the weights of the classes
    it got wrong; no later loss shows it, the check of the trained weights does."""
    model = load_model(files["float"])
    weights = model.tensors[model.operators[0].inputs[1]].array()
    x = np.full((1, 16), 1e33, np.float32)
    wrong = int(np.argmin(weights @ np.ones(16)))  # the class the huge sample scores lowest
    data, out = tmp_path / "one.npz", tmp_path / "tuned.tflite"
    np.savez(data, x=x, y=np.array([wrong]))
    proc = run_train(
        files, tmp_path / "log", "float", "--data", str(data), "--lr", "1000000", "-o", str(out)
    )
    line = one_error_line(proc)
    assert "training diverged: " in line and (
        "trained values of operator 0 (FULLY_CONNECTED)'s weights are NaN or infinite" in line
    ), line
    assert not out.exists()
