"""The model state in the STM32F746G-DISCO twin's SDRAM (`mcugen train --state-memory`): the
kernels read and write the weights, sums and momenta there in place and train to the same tuned
model as with the state in RAM, byte for byte, and the linked RAM is the fit verdict's, the state
no longer in it. VWW MobileNetV1's last block (its 275 KB of weights do not fit next to the
firmware in the board's 320 KB) needs ../shared/models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from support import NEEDS_TWIN, SHARED_MODELS, classifier_file, synthetic_dataset

pytestmark = NEEDS_TWIN


def train(capsys: pytest.CaptureFixture[str], argv: list[str], output: Path) -> dict:
    assert main([*argv, "--json", "-o", str(output)]) == 0
    return json.loads(capsys.readouterr().out)


def test_state_in_sdram_trains_as_the_state_in_ram(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two FULLY_CONNECTED layers with momentum and accumulation (weights, sums and momenta in the
    state), two epochs, forced to SDRAM and to RAM on the disco twin."""
    path, x, y = classifier_file(tmp_path, 6, seed=7)
    np.savez(tmp_path / "d.npz", x=x, y=y)
    argv = ["train", str(path), "--data", str(tmp_path / "d.npz"), "--trainable", "last:2"]
    argv += ["--momentum", "0.5", "--accumulate", "3", "--epochs", "2"]
    argv += ["--board", "disco-f746ng", "--emulate"]
    runs = {
        where: train(capsys, [*argv, "--state-memory", where], tmp_path / f"{where}.tflite")
        for where in ("slow", "ram")
    }
    slow, ram = runs["slow"]["state"], runs["ram"]["state"]
    assert slow["memory"] == "sdram" and ram["memory"] == "ram"
    assert slow["bytes"] == ram["bytes"] == runs["slow"]["state_bytes"] > 0
    for report in (slow, ram):
        assert report["ram_bytes"] == report["planned_ram_bytes"]  # the linker agrees
    assert ram["ram_bytes"] - slow["ram_bytes"] == slow["bytes"]
    assert slow["slow_section_bytes"] == slow["bytes"] and ram["slow_section_bytes"] == 0
    assert slow["modelled_access_cycles_per_step"] == slow["bytes"] * 5 // 2  # 1.5 + 1.0 a byte
    assert (tmp_path / "slow.tflite").read_bytes() == (tmp_path / "ram.tflite").read_bytes()
    assert runs["slow"]["loss"] == runs["ram"]["loss"]
    assert runs["slow"]["loss"][-1] != runs["slow"]["loss"][0]  # it did learn something


@pytest.mark.skipif(not SHARED_MODELS.exists(), reason="needs ../shared/models")
def test_vww_last_block_at_half_the_store_all_arena_with_the_state_in_sdram(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """VWW's last block and classifier (275,472 B of weights) on the disco twin at half the
    store-all arena with the state in SDRAM (`--state-memory slow`: since a paged plan's input
    copy went to the SDRAM too, the RAM has room for this state, and `auto` keeps it there), and
    the tuned model is store-all's on the F767 twin."""
    model = SHARED_MODELS / "mlperf_vww_mbv1_int8.tflite"
    graph = load_model(model)
    tg = build_training_graph(graph, TrainOptions(trainable="last:3"))
    store_all = PlanOptions(rewrites=False, order="stored", layout="greedy_by_size", in_place=False)
    budget = generate(tg.graph, options=store_all).plan.arena_bytes // 2
    x, y = synthetic_dataset(graph, 2, seed=1)
    np.savez(tmp_path / "d.npz", x=x, y=y)
    argv = ["train", str(model), "--data", str(tmp_path / "d.npz"), "--trainable", "last:3"]
    argv += ["--emulate"]
    plain = train(capsys, [*argv, "--board", "nucleo-f767"], tmp_path / "plain.tflite")
    disco = [*argv, "--board", "disco-f746ng", "--ram-budget", str(budget)]
    disco += ["--state-memory", "slow"]
    half = train(capsys, disco, tmp_path / "half.tflite")
    assert half["arena_bytes"] <= budget and half["state"]["memory"] == "sdram"
    assert plain["state"]["memory"] == "ram"
    assert half["state"]["ram_bytes"] == half["state"]["planned_ram_bytes"] <= 327_680
    assert (tmp_path / "half.tflite").read_bytes() == (tmp_path / "plain.tflite").read_bytes()
    assert half["loss"] == plain["loss"]
