"""`mcugen plan` reports: per-strategy table, JSON `strategies`, memory-over-time charts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mcugen.cli import main
from mcugen.model.tflite_write import write_model
from mcugen.plan.chart import memory_chart
from mcugen.plan.compare import StrategyRun, compare_strategies, strategy_pairs
from mcugen.plan.layout import LAYOUTS
from mcugen.plan.memory_plan import plan_memory
from mcugen.plan.order import ORDERS
from mcugen.report.text import strategy_table
from support import SHARED_MODELS
from testgraphs import nas_cells

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "nas.tflite"
    path.write_bytes(write_model(nas_cells(1, cells=2)))
    return path


def test_json_keeps_its_keys_and_lists_every_strategy(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(model), "--json", "--timings"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("arena_bytes", "peak_live_bytes", "order", "offsets", "plan_seconds"):
        assert key in report
    assert report["layout_chosen"] in LAYOUTS and report["mcugen_version"]
    runs = report["strategies"]
    assert {r["order"] for r in runs} == set(ORDERS)
    assert {r["layout"] for r in runs} == set(LAYOUTS)
    chosen = [r for r in runs if r["chosen"]]
    assert len(chosen) == 1 and chosen[0]["arena_bytes"] == report["arena_bytes"]
    for r in runs:
        assert {"arena_bytes", "peak_live_bytes", "arena_lower_bound", "plan_seconds"} <= set(r)
        if not r["error"]:
            assert r["arena_bytes"] >= r["peak_live_bytes"] >= r["arena_lower_bound"]
            assert r["layout_gap_bytes"] == r["arena_bytes"] - r["peak_live_bytes"]


def test_text_table_names_every_registered_strategy(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(model)]) == 0
    text = capsys.readouterr().out
    table = text.split("strategies (bytes; * = chosen):")[1].split("\n\n")[0]
    for name in [*ORDERS, *LAYOUTS]:
        assert name in table
    assert "arena LB" in table and "gap to LB" in table and "any-order" not in table
    assert sum(line.startswith("*") for line in table.splitlines()) == 1


def test_no_strategies_flag_drops_the_table(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(model), "--json", "--no-strategies"]) == 0
    assert "strategies" not in json.loads(capsys.readouterr().out)


def test_strategy_pairs_are_bounded_and_unique() -> None:
    pairs = strategy_pairs()
    assert len(pairs) == len(set(pairs)) <= len(ORDERS) + len(LAYOUTS) + 1
    assert ("stored", "greedy_by_size") in pairs, "TFLM's own plan is always a row"
    assert {o for o, _ in pairs} == set(ORDERS) and {lay for _, lay in pairs} == set(LAYOUTS)


def test_failing_strategy_is_an_error_row_not_an_exception() -> None:
    graph = nas_cells(1, cells=2)
    runs = compare_strategies(graph, [("no_such_order", "greedy_by_size")])
    assert runs[0].error and "no_such_order" in runs[0].error
    assert "error" in strategy_table(runs)
    ok = StrategyRun("stored", "greedy_by_size", 96, 64, 32, 48, 0.001)
    row = strategy_table([ok]).splitlines()[1].split()
    assert row[2:7] == ["96", "64", "32", "32", "200.0%"]  # arena, peak, bound, layout gap, gap


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_chart_files_are_valid(
    model: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"chart.{fmt}"
    assert main(["plan", str(model), "--chart", str(out)]) == 0
    assert f"chart written to {out}" in capsys.readouterr().out
    data = out.read_bytes()
    if fmt == "png":
        assert data.startswith(PNG_MAGIC)
    else:
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
        assert b">t0<" in data or b">t0=" in data, "buffers are labelled by tensor index"
        assert b"lower bound, any plan" in data
    assert sorted(p.name for p in tmp_path.iterdir()) == [".mcugen-outputs", out.name], (
        "no temporary"
    )


def test_chart_is_deterministic_and_rejects_unknown_formats(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = nas_cells(1, cells=2)
    plan = plan_memory(graph)
    assert memory_chart(plan, "svg") == memory_chart(plan, "svg")
    assert memory_chart(plan, "png") == memory_chart(plan, "png")
    with pytest.raises(ValueError):
        memory_chart(plan, "gif")
    assert main(["plan", str(model), "--chart", str(tmp_path / "chart.gif")]) == 2
    assert "*.png or *.svg" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
def test_vww_table_shows_tflm_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    path = SHARED_MODELS / "mlperf_vww_mbv1_int8.tflite"
    assert main(["plan", str(path), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["strategies"]
    baseline = next(r for r in runs if (r["order"], r["layout"]) == ("stored", "greedy_by_size"))
    assert baseline["arena_bytes"] == 73728 and baseline["peak_live_bytes"] == 55296
    assert all(r["arena_bytes"] >= r["peak_live_bytes"] for r in runs if not r["error"])


def test_json_without_timings_is_byte_identical_from_run_to_run(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = []
    for _ in range(2):
        assert main(["plan", str(model), "--json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert "plan_seconds" not in outputs[0]
