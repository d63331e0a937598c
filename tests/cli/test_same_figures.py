"""Every model command gives the same RAM figures under the same names (issue 31): `plan --json`,
`build`, `run --json` and `verify --json` on a board's twin, and `report --json` against `plan`
for the board itself. benchmarks/same_figures.py does the comparison (and runs every shared
model); here the bundled example on both F7 boards, and when ../shared/models is present a paged
model (mobilenet_v2 through the SDRAM), a split arena (MCUNet VWW over DTCM and SRAM1) and a
model with a state (micro_speech's LSTM)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from support import EXAMPLE, ROOT, SHARED_MODELS


def _same_figures():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "same_figures", ROOT / "benchmarks" / "same_figures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = [
    (EXAMPLE, "nucleo-f767"),
    (EXAMPLE, "disco-f746ng"),
    (SHARED_MODELS / "tflm_mobilenet_v2_int8.tflite", "disco-f746ng"),
    (SHARED_MODELS / "mcunet_vww_mixed.tflite", "nucleo-f767"),
    (SHARED_MODELS / "tflm_micro_speech_lstm_int8.tflite", "disco-f746ng"),
]


@pytest.mark.parametrize(("model", "board"), CASES, ids=lambda v: getattr(v, "stem", v))
def test_every_command_gives_the_same_ram_figures(model: Path, board: str, tmp_path: Path) -> None:
    if not model.exists():
        pytest.skip("../shared/models not present")
    same = _same_figures()
    found = same.figures(model, board, tmp_path)
    assert same.differences(found) == []
    plan = found["plan"]
    assert plan["total"] == sum(plan[k] for k in ("arena", "model_state", "runtime_state", "stack"))
    if model.stem == "tflm_mobilenet_v2_int8":  # paged: the buffers and the input copy in SDRAM
        assert plan["slow"] > 1_404_928 and plan["total"] < 200_000
    if model.stem == "tflm_micro_speech_lstm_int8":
        assert plan["model_state"] > 0


def test_the_comparison_can_fail() -> None:
    same = _same_figures()
    row = dict.fromkeys(same.KEYS, 1)
    found = {name: dict(row) for name in ("plan", "build", "run", "verify", "plan (board)")}
    found["report (board)"] = {**row, "runtime_state": 2}
    assert same.differences(found) == ["report (board) runtime_state 2 != plan (board) 1"]
