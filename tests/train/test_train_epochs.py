"""`mcugen train` reports each epoch's loss and accuracy, and with --val-data the held-out ones
(issue 31, item 14): the figures agree with TFLM running the tuned model, and evaluating the
held-out data changes nothing the run trains or writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.reference import tflm_outputs
from support import classifier_file


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("epochs")
    model, x, y = classifier_file(d, 48, seed=5)
    np.savez(d / "train.npz", x=x[:36], y=y[:36])
    np.savez(d / "val.npz", x=x[36:], y=y[36:])
    return {"dir": d, "model": model, "train": d / "train.npz", "val": d / "val.npz"}


def train(capsys: pytest.CaptureFixture[str], files: dict[str, Path], *args: str) -> dict:
    argv = ["train", str(files["model"]), "--board", "host", "--data", str(files["train"])]
    assert main([*argv, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def tflm_figures(model: Path, data: Path) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) of TFLM running `model` on the samples of `data`."""
    x, y = np.load(data)["x"], np.load(data)["y"]
    outs = tflm_outputs(model.read_bytes(), load_model(model), [[s[None]] for s in x])
    probs = np.array([o[0].reshape(-1) for o in outs], dtype=np.float64)
    loss = float(np.mean(-np.log(probs[np.arange(len(y)), y])))
    return loss, float(np.mean(probs.argmax(axis=1) == y))


def test_without_learning_the_figures_are_the_models(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """At learning rate 0 every epoch's running figures are the model's on the training data,
    and the held-out ones its figures on the held-out data, as TFLM computes them."""
    tuned = files["dir"] / "unchanged.tflite"
    args = ["--lr", "0", "--epochs", "2", "--val-data", str(files["val"]), "-o", str(tuned)]
    report = train(capsys, files, *args)
    loss, accuracy = tflm_figures(tuned, files["train"])
    held_loss, held_accuracy = tflm_figures(tuned, files["val"])
    assert [e["epoch"] for e in report["epochs"]] == [1, 2]
    for epoch in report["epochs"]:
        assert epoch["loss"] == pytest.approx(loss, rel=1e-4)
        assert epoch["accuracy"] == accuracy
        assert epoch["held_out_loss"] == pytest.approx(held_loss, rel=1e-4)
        assert epoch["held_out_accuracy"] == held_accuracy
    last = {k: v for k, v in report["epochs"][-1].items() if k != "epoch"}
    assert report["final"] == last
    assert report["held_out"] == {"data": str(files["val"]), "samples": 12, "every_epoch": True}
    assert report["epoch_loss"] == [e["loss"] for e in report["epochs"]]


@pytest.mark.parametrize("accumulate", [1, 2])
def test_held_out_data_changes_nothing_trained(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], accumulate: int
) -> None:
    """The same run with and without --val-data writes the same bytes and has the same losses;
    the held-out figures after the last epoch are TFLM's on the tuned model. With --accumulate
    above 1 the held-out data is evaluated after the last epoch only."""
    options = ["--epochs", "3", "--trainable", "last:2", "--lr", "0.02", "--momentum", "0.5"]
    options += ["--accumulate", str(accumulate)]
    plain, held = (
        files["dir"] / f"plain{accumulate}.tflite",
        files["dir"] / f"held{accumulate}.tflite",
    )
    without = train(capsys, files, *options, "-o", str(plain))
    report = train(capsys, files, *options, "--val-data", str(files["val"]), "-o", str(held))
    assert held.read_bytes() == plain.read_bytes()
    assert report["loss"] == without["loss"] and report["epochs"][0]["accuracy"] is not None
    assert without["held_out"] is None and without["final"]["held_out_loss"] is None
    loss, accuracy = tflm_figures(held, files["val"])
    assert report["final"]["held_out_loss"] == pytest.approx(loss, rel=1e-4)
    assert report["final"]["held_out_accuracy"] == accuracy
    assert report["final"]["loss"] < report["epochs"][0]["loss"]
    every = accumulate == 1
    assert report["held_out"]["every_epoch"] is every
    assert (report["epochs"][0]["held_out_loss"] is not None) is every


def test_the_text_report_prints_each_epoch(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["train", str(files["model"]), "--board", "host", "--data", str(files["train"])]
    assert main([*argv, "--epochs", "2", "--val-data", str(files["val"])]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"  held-out: 12 samples of {files['val']}, after every epoch" in out
    epochs = [line for line in out if line.startswith("  epoch ")]
    assert len(epochs) == 2, out
    for k, line in enumerate(epochs, 1):
        assert line.startswith(f"  epoch {k}: loss ") and "(mean), accuracy " in line, line
        assert "%; held-out loss " in line and line.endswith(" %"), line


def test_a_regressor_has_losses_and_no_accuracy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(2)
    b = GraphBuilder()
    x = b.input((1, 8), "float32")
    w = b.const(rng.normal(0, 0.3, (3, 8)).astype(np.float32))
    y = b.activation((1, 3), "float32")
    b.op("FULLY_CONNECTED", [x, w, b.const(np.zeros(3, np.float32))], [y])
    b.output(y)
    model = tmp_path / "reg.tflite"
    model.write_bytes(write_model(b.graph()))
    samples = rng.normal(0, 1, (16, 8)).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=samples, y=samples[:, None, :3] * np.float32(0.5))
    argv = ["train", str(model), "--board", "host", "--data", str(tmp_path / "d.npz")]
    assert main([*argv, "--val-data", str(tmp_path / "d.npz"), "--epochs", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["loss_function"] == "mse"
    assert all(e["accuracy"] is None and e["held_out_accuracy"] is None for e in report["epochs"])
    assert report["final"]["held_out_loss"] < report["epochs"][0]["held_out_loss"]
