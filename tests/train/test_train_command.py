"""`mcugen train` on the host: the loss falls on a learnable dataset, the tuned model runs in
TFLM (float tail and requantised int8), and every mistake is one error line with no output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.model.tflite_import import load_model
from mcugen.reference import tflm_outputs
from support import classifier_file


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("train")
    model, x, y = classifier_file(d, 48, seed=5)
    data = d / "data.npz"
    np.savez(data, x=x, y=y)
    return {"dir": d, "model": model, "data": data}


def host_argv(files: dict[str, Path], data: Path | None = None) -> list[str]:
    """`mcugen train` of the test model on the host, on `data` (default: the good dataset)."""
    return ["train", str(files["model"]), "--board", "host", "--data", str(data or files["data"])]


def assert_one_error_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def accuracy(model: Path, x: np.ndarray, y: np.ndarray) -> float:
    graph = load_model(model)
    outs = tflm_outputs(model.read_bytes(), graph, [[s[None]] for s in x])
    return float(np.mean([int(np.argmax(o[0])) == int(c) for o, c in zip(outs, y, strict=True)]))


def test_training_lowers_the_loss_and_tflm_runs_the_result(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tuned = files["dir"] / "tuned.tflite"
    # six epochs of the last two layers, momentum, gradients accumulated over two samples
    argv = [*host_argv(files), *"--epochs 6 --trainable last:2 --lr 0.02 --momentum 0.5".split()]
    argv += ["--accumulate", "2"]
    report = run_json(capsys, [*argv, "-o", str(tuned), "--json"])
    epochs = report["epoch_loss"]
    assert len(report["loss"]) == 6 * 48 and len(epochs) == 6
    assert epochs[-1] < 0.6 * epochs[0], epochs
    assert report["arena_bytes"] > 0 and report["state_bytes"] > 0
    x, y = np.load(files["data"])["x"], np.load(files["data"])["y"]
    before, after = accuracy(files["model"], x, y), accuracy(tuned, x, y)
    assert after > before + 0.2, (before, after)
    # int8 throughout: TFLM runs it, and it keeps most of what was learnt
    quant = files["dir"] / "tuned_int8.tflite"
    run_json(capsys, [*argv, "-o", str(quant), "--requantize", "--json"])
    assert load_model(quant).tensors[load_model(quant).inputs[0]].dtype == "int8"
    assert accuracy(quant, x, y) > before + 0.15


def test_the_same_run_gives_the_same_bytes(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = host_argv(files)
    outs = []
    for k in range(2):
        out = files["dir"] / f"again{k}.tflite"
        run_json(capsys, [*argv, "--trainable", "last:1", "-o", str(out), "--json"])
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"y": "out_of_range"}, "is outside the model's 4 classes"),
        ({"x": "wrong_shape"}, "samples of shape (15,); the model takes (1, 16)"),
        ({"x": "float"}, "samples of type float32; the model takes int8"),
        ({"drop": "y"}, "the dataset has no y"),
        ({"count": "short"}, "47 labels for 48 samples"),
    ],
)
def test_bad_datasets_are_one_line_errors(
    files: dict[str, Path],
    change: dict[str, str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = dict(np.load(files["data"]))
    if change.get("y") == "out_of_range":
        data["y"] = data["y"].copy()
        data["y"][7] = 4
    if change.get("x") == "wrong_shape":
        data["x"] = data["x"][:, :15]
    if change.get("x") == "float":
        data["x"] = data["x"].astype(np.float32)
    if "drop" in change:
        del data[change["drop"]]
    if change.get("count") == "short":
        data["y"] = data["y"][:47]
    bad = files["dir"] / "bad.npz"
    np.savez(bad, **data)
    out = files["dir"] / "never.tflite"
    assert_one_error_line(capsys, [*host_argv(files, bad), "-o", str(out)], message)
    assert not out.exists()


@pytest.mark.parametrize(
    ("trainable", "message"),
    [
        ("last:3", "the model has 2 weighted operators"),
        ("2", "operator 2 (SOFTMAX) has no weights to train"),
        ("7", "operator 7 is past the model's 3 operators"),
        ("one", "'one' is not an operator index"),
        ("last:0", "want last:K with K >= 1"),
    ],
)
def test_bad_trainable_choices_are_one_line_errors(
    files: dict[str, Path], trainable: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_one_error_line(capsys, [*host_argv(files), "--trainable", trainable], message)


def test_missing_dataset_and_bad_options(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["train", str(files["model"]), "--board", "host"]
    assert main([*argv, "--data", str(files["dir"] / "nope.npz")]) == 2
    assert "dataset file not found" in capsys.readouterr().err
    assert main([*argv, "--data", str(files["data"]), "--momentum", "1.5"]) == 2
    assert "--momentum 1.5 must be below 1" in capsys.readouterr().err
    assert main([*argv, "--data", str(files["data"]), "--loss", "hinge"]) == 2
    assert "unknown loss 'hinge'" in capsys.readouterr().err


def test_plan_trainable_plans_the_training_graph_mcugen_train_runs(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`mcugen plan --trainable` reports the arena and state `mcugen train` builds; the state
    grows with momentum and accumulation (sum and momentum per weight), and the board verdict
    counts it."""
    options = ["--trainable", "last:2", "--momentum", "0.5", "--accumulate", "2"]
    trained = run_json(capsys, [*host_argv(files), *options, "--json"])
    planned = run_json(capsys, ["plan", str(files["model"]), *options, "--json"])
    assert planned["arena_bytes"] == trained["arena_bytes"]
    assert planned["persistent_bytes"] == trained["state_bytes"]
    plain = run_json(capsys, ["plan", str(files["model"]), "--trainable", "last:2", "--json"])
    assert planned["persistent_bytes"] >= 3 * plain["persistent_bytes"] - 3 * 16
    text_argv = ["plan", str(files["model"]), *options, "--board", "nucleo-f767"]
    assert main(text_argv) == 0
    out = capsys.readouterr().out
    assert "McugenSoftmaxCrossEntropy" in out
    assert f"state {planned['persistent_bytes']:,}" in out
    assert_one_error_line(
        capsys, ["plan", str(files["model"]), "--trainable", "last:9"], "--trainable last:9"
    )
