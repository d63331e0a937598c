"""`mcugen report`: the figures (view-model) of small models, the page against its embedded JSON,
the atomic write and the one-line errors. No browser here (test_report_browser.py has one)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from mcugen import cli
from mcugen.boards import load_board, resolve_target
from mcugen.commands.plan import plan_model, strategy_runs
from mcugen.firmware.fits import target_fit
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.plan.compare import TFLM_BASELINE
from mcugen.plan.fit import fit_of, weight_bytes
from mcugen.plan.memory_plan import plan_memory
from mcugen.plan.target import MemoryTarget
from mcugen.report.html.charts import nice_ticks, timeline_chart
from mcugen.report.html.figures import TRACE_POINTS, ReportInputs, report_figures
from mcugen.report.html.render import number, render_report
from mcugen.report.html.trace import parse_trace
from support import (
    EXAMPLE,
    NEEDS_TWIN,
    assert_page_shows_the_json,
    floor_model,
    int8_classifier,
    parse_page,
)

BOARD = "nucleo-f767"


def example_inputs(**extra: Any) -> ReportInputs:
    graph = load_model(EXAMPLE)
    target = resolve_target(load_board(BOARD), emulate=False)
    from argparse import Namespace

    from mcugen.commands._common import plan_options

    args = Namespace(
        order="auto", layout="auto", no_inplace=False, no_rewrite=False, time_budget=None
    )
    options = plan_options(args, firmware=True, target=target)
    planned = plan_model(graph, options)
    fit = target_fit(planned.graph, planned.plan, "static", weight_bytes(planned.graph), target)
    runs = strategy_runs(graph, planned, in_place=True)
    return ReportInputs(
        "tiny_cnn_int8.tflite", planned.graph, planned.plan, fit, target.board, runs, **extra
    )


def test_the_figures_of_the_example_are_the_plan_and_the_verdict() -> None:
    inputs = example_inputs(run_note="not run (--no-run)")
    f = report_figures(inputs)
    assert report_figures(example_inputs(run_note="not run (--no-run)")) == f  # deterministic
    json.dumps(f)  # plain data
    plan, fit = inputs.plan, inputs.fit
    v = f["verdict"]
    assert v["fits"] and v["problem"] is None and v["board"] == BOARD
    assert v["ram_need"] == fit.arena + fit.stack + fit.runtime == fit.ram_need
    assert v["ram_free"] == v["ram_size"] - v["ram_need"] > 0
    ram = f["memory"]["ram"]
    assert sum(p["bytes"] for p in ram["parts"]) == ram["used"] == v["ram_need"]
    assert [p["name"] for p in ram["parts"]][0] == "arena"
    (line,) = f["timelines"]
    assert line["pool"] == "arena" and line["live"] == plan.live_bytes
    assert line["peak"] == plan.lower_bound == max(line["live"]) and line["size"] == fit.arena
    assert len(line["labels"]) == len(plan.order) + 1 and line["labels"][0] == "(inputs)"
    s = f["strategies"]
    assert sum(r["chosen"] for r in s["rows"]) == 1 and sum(r["tflm"] for r in s["rows"]) == 1
    tflm = plan_memory(load_model(EXAMPLE), order=TFLM_BASELINE[0], layout=TFLM_BASELINE[1])
    assert s["tflm_arena"] == tflm.arena_bytes and s["chosen_arena"] == plan.arena_bytes
    assert f["operators"] == {
        "ran": False,
        "note": "not run (--no-run)",
        "rows": [],
        "estimate": None,
    }
    assert f["trace"] == {"measured": False, "note": "not measured (no power monitor)"}


def test_a_split_arena_has_one_timeline_per_pool() -> None:
    from mcugen.pipeline import prepare
    from mcugen.plan.pools import PoolMemory
    from support import pool_target

    graph = load_model(EXAMPLE)
    memories = (PoolMemory("dtcm", 1024, 0.25, 0.25), PoolMemory("sram1", 376832, 0.5, 0.5))
    target = pool_target(memories, stack=8192, firmware_ram=1184)
    options = PlanOptions(pools="fast_first", target=target)
    g, _, plan = prepare(graph, options)
    assert plan.pools is not None and plan.pools.split
    board_target = MemoryTarget("b", 1 << 20, 1 << 21, 8192, 1184)
    fit = fit_of(g, plan, "static", weight_bytes(g), board_target)
    board = load_board(BOARD)
    f = report_figures(ReportInputs("m", g, plan, fit, board))
    assert [t["pool"] for t in f["timelines"]] == ["dtcm", "sram1"]
    total = [sum(t["live"][k] for t in f["timelines"]) for k in range(len(plan.order) + 1)]
    assert total == plan.live_bytes  # every buffer in exactly one pool
    for t, pool in zip(f["timelines"], plan.pools.pools, strict=True):
        assert t["peak"] <= t["size"] == pool.size and t["room"] == pool.memory.size
    page = parse_page(render_report(f))
    assert {"chart-timeline-0", "chart-timeline-1"} <= set(page.charts)


def fake_device(inputs: ReportInputs) -> dict[str, Any]:
    """A profiled run's report as `device_report` shapes it (figures invented, shapes real)."""
    rows = [
        {
            "step": k,
            "operator": op,
            "opcode": inputs.graph.operators[op].opcode,
            "kernel": "reference",
            "macs": 10 * k,
            "instructions": 1000 + 100 * k,
            "estimate_uj": round((1000 + 100 * k) * 0.001, 3),
        }
        for k, op in enumerate(inputs.plan.order)
    ]
    return {
        "board": BOARD,
        "emulated": True,
        "unit": "instructions",
        "per_inference": sum(1000 + 100 * k for k in range(len(rows))) + 500,
        "macs": 1234,
        "per_mac": 1.5,
        "stack_used": 600,
        "stack_bytes": 8192,
        "sizes": {"flash_bytes": 1, "ram_bytes": 2, "weights": 3, "code": 4, "arena": 5},
        "per_operator": rows,
        "estimate": {
            "ms": 1.25,
            "uj": 12.5,
            "sleep_uw": None,
            "board": BOARD,
            "clock_hz": 216_000_000,
            "cycles_per_instruction": 1.0,
            "run_mw": 169.72,
            "calibration": "none: an assumed CPI",
        },
    }


TRACE = {
    "rate_hz": 1000,
    "amperes": [0.010] * 100 + [0.030] * 50 + [0.010] * 50,
    "marks": [100, 150],
    "volts": 3.3,
    "source": "a test trace",
}


def test_the_page_shows_exactly_the_embedded_figures() -> None:
    inputs = example_inputs()
    from dataclasses import replace

    inputs = replace(inputs, device=fake_device(inputs), trace=parse_trace(TRACE))
    figures = report_figures(inputs)
    html = render_report(figures)
    assert render_report(figures) == html  # byte-identical
    embedded = assert_page_shows_the_json(html)
    assert embedded == json.loads(json.dumps(figures))
    page = parse_page(html)
    assert {"chart-memory", "chart-timeline-0", "chart-operators", "chart-trace"} <= set(
        page.charts
    )
    assert all(n > 3 for n in page.charts.values())
    assert page.urls == []  # self-contained: no src or href anywhere
    assert "ESTIMATE" in html and "UNCALIBRATED" in html and "none: an assumed CPI" in html
    ops = figures["operators"]
    assert [r["step"] for r in ops["rows"]] == list(range(1, len(inputs.plan.order) + 1))
    assert ops["same_order"] and math.isclose(
        sum(r["share_pct"] for r in ops["rows"]), 100, abs_tol=1
    )
    (window,) = figures["trace"]["windows"]
    assert window["mean_ma"] == 30.0 and window["ms"] == 50.0
    assert window["uj"] == pytest.approx(0.030 * 3.3 * 0.050 * 1e6)
    assert figures["trace"]["marks_ms"] == [100.0, 150.0]


def test_the_missing_parts_are_said_on_the_page() -> None:
    html = render_report(report_figures(example_inputs(run_note="not run (--no-run)")))
    page = parse_page(html)
    assert "chart-operators" not in page.charts and "chart-trace" not in page.charts
    assert "No per-operator figures: not run (--no-run)." in html
    assert "not measured (no power monitor)." in html


def test_a_long_trace_is_drawn_from_its_envelope_with_the_spike() -> None:
    samples = [0.01] * 100_000
    samples[54_321] = 0.5
    figures = report_figures(example_inputs(trace=parse_trace({"rate": 1e5, "samples": samples})))
    points = figures["trace"]["points"]
    assert len(points) <= TRACE_POINTS and max(p[1] for p in points) == 500.0
    assert [p[0] for p in points] == sorted(p[0] for p in points)


def test_chart_helpers() -> None:
    assert nice_ticks(65_184) == [0, 20_000, 40_000, 60_000, 80_000]
    assert nice_ticks(0) == [0.0, 1.0] and nice_ticks(7)[-1] >= 7
    assert number(1234567) == "1,234,567" and number(12.345, 1) == "12.3" and number(None) == "-"
    line = {"pool": "arena", "size": 100, "peak": 80, "room": None, "peak_step": 1}
    chart = timeline_chart({**line, "live": [10, 80, 5], "labels": ["a", "b", "c"]}, 0)
    bars = [s for s in chart.shapes if s.kind == "rect"]
    assert len(bars) == 3 and bars[1].cls == "bar peak" and bars[1].h > bars[0].h > bars[2].h


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        ([1, 2], "no JSON object"),
        ({"rate_hz": 0, "amperes": [1]}, "rate_hz must be positive"),
        ({"rate_hz": 10, "amperes": []}, "amperes must be a list"),
        ({"rate_hz": 10, "amperes": [1, "x"]}, "a sample must be a finite number"),
        ({"rate_hz": 10, "amperes": [1], "marks": [5]}, "marks must be sample indices"),
        ({"rate_hz": 10, "amperes": [1, 2], "marks": [2, 1]}, "increasing order"),
        ({"rate_hz": 10, "amperes": [1], "unit": "kA"}, "unit must be one of"),
    ],
)
def test_a_bad_trace_is_one_error_line(
    trace: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    out = tmp_path / "r.html"
    code = cli.main(
        ["report", str(EXAMPLE), "--board", BOARD, "--trace", str(path), "-o", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("unknown board", "unknown board 'no-such-board'"),
        ("host board", "the host board has no memory limits"),
        ("unsupported model", "operator 0 (FLOOR)"),
        ("not a model", "not-a-model.tflite"),
        ("missing directory", "the output directory does not exist"),
        ("output is a directory", "the output is a directory"),
        ("missing trace", "trace file not found"),
    ],
)
def test_bad_input_is_one_error_line_and_no_file(
    case: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    model, board, extra = str(EXAMPLE), BOARD, ["--no-run"]
    if case == "unknown board":
        board = "no-such-board"
    elif case == "host board":
        board = "host"
    elif case == "unsupported model":
        model = str(floor_model(tmp_path))
    elif case == "not a model":
        (tmp_path / "not-a-model.tflite").write_bytes(b"hello")
        model = str(tmp_path / "not-a-model.tflite")
    elif case == "missing directory":
        out = tmp_path / "nowhere" / "r.html"
    elif case == "output is a directory":
        out = tmp_path
    elif case == "missing trace":
        extra += ["--trace", str(tmp_path / "none.json")]
    code = cli.main(["report", model, "--board", board, "-o", str(out), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1 and err.startswith("mcugen: error")
    assert sorted(os.listdir(tmp_path)) in ([], ["floor.tflite"], ["not-a-model.tflite"])


def test_the_page_is_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out, sidecar = tmp_path / "r.html", tmp_path / "r.json"
    args = ["report", str(EXAMPLE), "--board", BOARD, "--no-run", "-o", str(out)]
    assert cli.main(args) == 0  # an earlier report of mcugen's: the next one may replace it
    capsys.readouterr()
    previous = out.read_text()

    def broken(*_: Any, **__: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("mcugen.outputs.os.replace", broken)
    assert cli.main([*args, "--json", str(sidecar)]) == 2
    assert "r.html: cannot write the file (disk full)" in capsys.readouterr().err
    assert out.read_text() == previous
    assert sorted(os.listdir(tmp_path)) == [".mcugen-outputs", "r.html"]
    monkeypatch.undo()
    assert cli.main([*args, "--json", str(sidecar)]) == 0
    assert "report written to" in capsys.readouterr().out
    html = out.read_text()
    figures = assert_page_shows_the_json(html)
    assert json.loads(sidecar.read_text()) == figures
    # no temporary file left
    assert sorted(os.listdir(tmp_path)) == [".mcugen-outputs", "r.html", "r.json"]


def test_a_model_that_does_not_fit_is_reported_and_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "wide.tflite"  # a 150,000-byte input: more than netduinoplus2's 128 KB
    model.write_bytes(write_model(int8_classifier(depth=150_000, hidden=1, classes=2)))
    out = tmp_path / "r.html"
    assert cli.main(["report", str(model), "--board", "netduinoplus2", "-o", str(out)]) == 0
    assert "does NOT fit netduinoplus2" in capsys.readouterr().out
    html = out.read_text()
    figures = assert_page_shows_the_json(html)
    v = figures["verdict"]
    assert not v["fits"] and v["ram_over"] == -v["ram_free"] > 0
    assert f"over by {v['ram_over']} bytes" in v["problem"]
    assert 'data-figure="verdict.ram_over"' in html
    assert figures["operators"]["note"] == "not run: the model does not fit netduinoplus2"
    assert "Does not fit netduinoplus2" in html and f"{-v['ram_free']:,}" in html


@NEEDS_TWIN
def test_the_example_runs_on_the_twin_with_the_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    assert cli.main(["report", str(EXAMPLE), "--board", BOARD, "-o", str(out)]) == 0
    capsys.readouterr()
    figures = assert_page_shows_the_json(out.read_text())
    ops = figures["operators"]
    assert ops["ran"] and ops["where"] == f"{BOARD}'s QEMU twin" and ops["same_order"]
    assert all(r["count"] > 0 and r["estimate_uj"] is not None for r in ops["rows"])
    assert ops["per_inference"] >= sum(r["count"] for r in ops["rows"])
    assert ops["estimate"]["board"] == BOARD and figures["verdict"]["flash_linked"]


def test_the_page_names_the_patch_stage_the_plan_runs(tmp_path: Path) -> None:
    """A patched plan's page says which operators run tile by tile, on what grid, at what MAC
    cost and for what arena (issue 33: the page never mentioned the stage); none without one."""
    from mcugen.pipeline import prepare
    from mcugen.plan.patches import DEFAULT_OVERHEAD
    from mcugen.report.html.figures import patch_stage
    from patch_graphs import image_stem

    stem = image_stem(1, hw=64)
    options = PlanOptions(patch_overhead=DEFAULT_OVERHEAD, patch_when="always")
    graph, _, plan = prepare(stem, options)
    assert plan.patches is not None and plan.patches.stage is not None
    found = patch_stage(graph, plan)
    assert found is not None
    assert found["operators_with_tiles"] == len(graph.operators) > len(stem.operators)
    assert found["arena"] == plan.arena_bytes < found["arena_without"]
    # this stem takes a second stage after the first: the page counts both stages' MACs
    assert found["stages"] == 1 + len(plan.later_patches) == 2
    later = plan.later_patches[0][0].stage
    assert later is not None
    assert found["macs_added"] == plan.patches.stage.macs_added + later.macs_added
    assert "then 1 more stage after it" in render_report(
        {**report_figures(example_inputs()), "patches": found}
    )
    whole = prepare(stem, PlanOptions(patch_overhead=0))[2]
    assert patch_stage(stem, whole) is None
    f = report_figures(example_inputs(run_note="not run (--no-run)"))
    assert f["patches"] is None
    page = render_report(f)
    assert 'id="patch-stage"' not in page
    patched = {**f, "patches": found}
    assert 'id="patch-stage"' in render_report(patched)
