"""`mcugen report` on the MLPerf Tiny models and the NUCLEO-F767ZI (twin runs included): each
page is written, fits, and shows the figures it embeds (about 30 s)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mcugen import cli
from support import SHARED_MODELS, assert_page_shows_the_json, parse_page

MODELS = (
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
)


@pytest.mark.models
@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
@pytest.mark.parametrize("name", MODELS)
def test_report_of_an_mlperf_tiny_model(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"{name}.html"
    model = SHARED_MODELS / f"{name}.tflite"
    assert cli.main(["report", str(model), "--board", "nucleo-f767", "-o", str(out)]) == 0
    assert "fits nucleo-f767" in capsys.readouterr().out
    html = out.read_text()
    figures = assert_page_shows_the_json(html)
    assert figures["verdict"]["fits"] and figures["verdict"]["flash_linked"]
    ops = figures["operators"]
    assert ops["ran"] and len(ops["rows"]) == figures["model"]["operators"]
    assert ops["estimate"] is not None and all(r["estimate_uj"] for r in ops["rows"])
    # the per-operator estimates add up to the inference's, less what runs between operators
    assert 0.9 * ops["estimate"]["uj"] <= sum(r["estimate_uj"] for r in ops["rows"])
    assert sum(r["estimate_uj"] for r in ops["rows"]) <= ops["estimate"]["uj"] * 1.001
    (line,) = figures["timelines"]
    assert line["peak"] <= line["size"] == figures["memory"]["ram"]["parts"][0]["bytes"]
    strategies = figures["strategies"]
    assert strategies["tflm_arena"] and strategies["rows"]
    charts = parse_page(html).charts
    assert {"chart-memory", "chart-timeline-0", "chart-operators"} <= set(charts)
