"""Every model command gives the same RAM and flash figures under the same names for the same
options (issues 31 and 33): `plan --json`, `build`, `run --json`, `verify --json` and
`measure --json` on a board's twin, `report --json` against `plan` for the board itself, and
`export --board`'s library arena and paged bytes against `plan --keep-input no --pools single`.
benchmarks/same_figures.py does the comparison (and runs every shared model); here the bundled
example on both F7 boards, with the reference kernels, with kernels chosen for memory, and paged
under `--ram-budget`, and plan against build in MLPerf Tiny's energy mode; and when
../shared/models is present a paged model without a budget (mobilenet_v2 through the SDRAM), a
split arena (MCUNet VWW over DTCM and SRAM1), a model with a state (micro_speech's LSTM) and a
patch stage (person_detect under `--patch-overhead 0.15`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from mcugen.model.tflite_write import write_model
from support import EXAMPLE, ROOT, SHARED_MODELS, conv_chain


def _same_figures():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "same_figures", ROOT / "benchmarks" / "same_figures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = [
    (EXAMPLE, "nucleo-f767", ()),
    (EXAMPLE, "disco-f746ng", ()),
    (EXAMPLE, "nucleo-f767", ("--kernels", "reference")),
    (EXAMPLE, "nucleo-f767", ("--kernels", "memory")),  # 3 layers swapped for 592 B of arena
    (EXAMPLE, "disco-f746ng", ("--ram-budget", "4000")),
    (SHARED_MODELS / "tflm_mobilenet_v2_int8.tflite", "disco-f746ng", ()),
    (SHARED_MODELS / "mcunet_vww_mixed.tflite", "nucleo-f767", ()),
    (SHARED_MODELS / "tflm_micro_speech_lstm_int8.tflite", "disco-f746ng", ()),
    (SHARED_MODELS / "tflm_person_detect_int8.tflite", "nucleo-f767", ("--patch-overhead", "0.15")),
]


@pytest.mark.parametrize(
    ("model", "board", "options"),
    CASES,
    ids=lambda v: (
        getattr(v, "stem", None) or ("-".join(v).lstrip("-") if isinstance(v, tuple) else v)
    ),
)
def test_every_command_gives_the_same_figures(
    model: Path, board: str, options: tuple[str, ...], tmp_path: Path
) -> None:
    if not model.exists():
        pytest.skip("../shared/models not present")
    same = _same_figures()
    found = same.figures(model, board, tmp_path, options)
    assert same.differences(found) == []
    linked = set(found) - {"verify", "plan (library)", "export"}
    assert all(found[name]["flash"] > 0 for name in linked)
    assert found["export"]["arena"] > 0
    plan = found["plan"]
    assert plan["total"] == sum(plan[k] for k in ("arena", "model_state", "runtime_state", "stack"))
    if model.stem == "tflm_mobilenet_v2_int8":  # paged: the buffers and the input copy in SDRAM
        assert plan["slow"] > 1_404_928 and plan["total"] < 200_000
    if model.stem == "tflm_micro_speech_lstm_int8":
        assert plan["model_state"] > 0
    if "--ram-budget" in options:  # paged: the arena within the budget, the rest in SDRAM
        assert plan["arena"] <= 4000 and plan["slow"] > 0
    if "--patch-overhead" in options:  # the patch stage's arena (38,896 B without it)
        assert plan["arena"] < 30_000


def test_plan_and_build_link_the_same_energy_mode_firmware(tmp_path: Path) -> None:
    """`plan --mlperf-mode energy` judges the flash of the firmware `build --mlperf-mode energy`
    links (its timestamp code differs from the performance mode's: 200 B less on the example)."""
    same = _same_figures()
    flash = {}
    for mode in ("performance", "energy"):
        on = ("--board", "nucleo-f767", "--mlperf-mode", mode)
        plan = json.loads(same._mcugen("plan", str(EXAMPLE), *on, "--json", cwd=tmp_path))
        built = same.build_figures(
            same._mcugen("build", str(EXAMPLE), *on, "-o", mode, cwd=tmp_path)
        )
        assert plan["fit"]["flash_need"] == built["flash"], mode
        flash[mode] = built["flash"]
    assert flash["energy"] != flash["performance"]


def test_the_comparison_can_fail() -> None:
    same = _same_figures()
    row = dict.fromkeys(same.KEYS, 1)
    names = ("plan", "build", "run", "verify", "measure", "plan (board)")
    found = {name: dict(row) for name in names}
    found["report (board)"] = {**row, "runtime_state": 2}
    found["measure"]["flash"] = 3
    found["verify"]["flash"] = -1  # not given: not compared
    found["plan (library)"] = dict.fromkeys(same.KEYS, -1) | {"arena": 5, "slow": 0}
    found["export"] = found["plan (library)"] | {"arena": 6}
    assert same.differences(found) == [
        "measure flash 3 != plan 1",
        "report (board) runtime_state 2 != plan (board) 1",
        "export arena 6 != plan (library) 5",
    ]


def test_plan_and_run_give_each_board_the_same_figures(tmp_path: Path) -> None:
    """`plan --boards` and `run --boards` on the twins: each board's arena and linked flash."""
    same = _same_figures()
    lcp = ROOT / "examples" / "lcp_k4_int8.tflite"
    found = same.boards_figures(lcp, "nucleo-f767,nucleo-f767", tmp_path)
    assert same.boards_differences(found) == []
    assert all(found["plan"][f"{k} {b}"] > 0 for k in same.PER_BOARD for b in (0, 1))
    found["run"]["flash 1"] += 4
    assert same.boards_differences(found) == [
        f"run flash 1 {found['run']['flash 1']:,} != plan {found['plan']['flash 1']:,}"
    ]


@pytest.mark.parametrize(
    "on",
    [
        ("--board", "host", "--ram-budget", "23155"),  # recomputes operator 0
        ("--board", "disco-f746ng", "--emulate", "--ram-budget", "16000"),  # pages to the SDRAM
    ],
    ids=["host-recompute", "disco-paged"],
)
def test_plan_and_train_give_the_same_figures_under_a_budget(
    on: tuple[str, ...], tmp_path: Path
) -> None:
    """`plan --trainable` plans what `train` builds under --ram-budget: the same schedule,
    arena, model state, paged bytes and (on a board) RAM."""
    same = _same_figures()
    model, data = tmp_path / "chain.tflite", tmp_path / "d.npz"
    model.write_bytes(write_model(conv_chain()))
    rng = np.random.default_rng(4)
    np.savez(data, x=rng.normal(0, 1, (4, 12, 12, 4)).astype(np.float32), y=np.arange(4) % 5)
    found = same.training_figures(model, data, on, tmp_path)
    assert same.pair_differences(found, "plan", "train") == []
    if "host" in on:
        assert found["plan"]["recomputed"] == 1 and found["plan"]["arena"] <= 23155
    else:
        assert found["plan"]["paged_out"] > 0 and found["plan"]["slow"] > 0
    found["train"]["arena"] += 16
    assert len(same.pair_differences(found, "plan", "train")) == 1
