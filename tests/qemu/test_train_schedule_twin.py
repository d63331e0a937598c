"""`mcugen train --ram-budget` on the twins: a schedule that recomputes (NUCLEO-F767ZI) and one
that pages to SDRAM (STM32F746G-DISCO) train to the same tuned model as store-all, byte for byte,
with the arena under the budget. The MLPerf case needs ../shared/models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcugen.cli import main
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from support import NEEDS_TWIN, SHARED_MODELS, conv_chain, synthetic_dataset

pytestmark = NEEDS_TWIN


def train(capsys: pytest.CaptureFixture[str], argv: list[str], output: Path, *extra: str) -> dict:
    assert main([*argv, *extra, "--json", "-o", str(output)]) == 0
    return json.loads(capsys.readouterr().out)


def test_recomputation_on_the_f767_twin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "chain.tflite"
    model.write_bytes(write_model(conv_chain()))
    rng = np.random.default_rng(4)
    data = tmp_path / "d.npz"
    np.savez(data, x=rng.normal(0, 1, (3, 12, 12, 4)).astype(np.float32), y=np.arange(3) % 5)
    argv = ["train", str(model), "--data", str(data), "--trainable", "all", "--epochs", "2"]
    twin = [*argv, "--board", "nucleo-f767", "--emulate"]
    host = train(capsys, [*argv, "--board", "host"], tmp_path / "host.tflite")
    plain = train(capsys, twin, tmp_path / "plain.tflite")
    budget = plain["arena_bytes"] * 9 // 10
    remat = train(capsys, twin, tmp_path / "remat.tflite", "--ram-budget", str(budget))
    assert remat["arena_bytes"] <= budget and remat["schedule"]["recomputed"]
    assert remat["schedule"]["cost_unit"] == "instructions measured on the twin"
    assert min(remat["per_step"]) > max(plain["per_step"])  # recomputation costs instructions
    tuned = {(tmp_path / f"{n}.tflite").read_bytes() for n in ("host", "plain", "remat")}
    assert len(tuned) == 1
    assert remat["loss"] == plain["loss"] == host["loss"]


@pytest.mark.skipif(not SHARED_MODELS.exists(), reason="needs ../shared/models")
def test_kws_at_half_the_store_all_arena_on_the_disco_twin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """KWS DS-CNN's last block and classifier: half the store-all arena (stored order, greedy by
    size, nothing shared), below its backward pointwise's own operands, so the pager runs kernels
    on the SDRAM in place; the same model as store-all on the F767 twin."""
    path = SHARED_MODELS / "mlperf_kws_dscnn_int8.tflite"
    graph = load_model(path)
    tg = build_training_graph(graph, TrainOptions(trainable="last:3"))
    plain_plan = PlanOptions(
        rewrites=False, order="stored", layout="greedy_by_size", in_place=False
    )
    budget = generate(tg.graph, options=plain_plan).plan.arena_bytes // 2
    x, y = synthetic_dataset(graph, 2, seed=1)
    data = tmp_path / "d.npz"
    np.savez(data, x=x, y=y)
    argv = ["train", str(path), "--data", str(data), "--trainable", "last:3", "--emulate"]
    plain = train(capsys, [*argv, "--board", "nucleo-f767"], tmp_path / "plain.tflite")
    paged = train(
        capsys,
        [*argv, "--board", "disco-f746ng"],
        tmp_path / "paged.tflite",
        "--ram-budget",
        str(budget),
    )
    assert paged["arena_bytes"] <= budget
    assert paged["paging"]["slow_memory"] == "sdram" and paged["paging"]["bytes_out_per_step"] > 0
    assert (tmp_path / "paged.tflite").read_bytes() == (tmp_path / "plain.tflite").read_bytes()
    assert paged["loss"] == plain["loss"]
