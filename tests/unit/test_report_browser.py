"""`mcugen report` in a real headless browser: the page renders (its figures and SVG charts in
the DOM after load, the numbers those of the embedded JSON, nothing on the console) and its
screenshot is a full, non-blank PNG. Skipped only when Chromium is not installed
(scripts/install.sh installs it)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mcugen import cli
from support import EXAMPLE, assert_page_shows_the_json, parse_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

WIDTH, HEIGHT = 1280, 2400


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium with the page's console printed on stderr (lines with ":CONSOLE")."""
    assert CHROMIUM is not None
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr"]
    return subprocess.run(
        [CHROMIUM, *flags, "--v=0", *args], capture_output=True, text=True, timeout=120
    )


def console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's report with a current trace, run on the twin when the tools are here."""
    folder = tmp_path_factory.mktemp("browser")
    trace = folder / "trace.json"
    amps = [0.012 + 0.02 * ((k // 50) % 2) for k in range(2000)]
    trace.write_text(json.dumps({"rate_hz": 20000, "amperes": amps, "marks": [500, 1500]}))
    twin = shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc")
    out = folder / "report.html"
    args = ["report", str(EXAMPLE), "--board", "nucleo-f767", "--trace", str(trace)]
    assert cli.main([*args, "-o", str(out), *([] if twin else ["--no-run"])]) == 0
    return out


def test_the_page_renders_its_figures_and_charts(page: Path) -> None:
    done = chromium("--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-500:]
    assert console(done.stderr) == []
    dom = done.stdout
    figures = assert_page_shows_the_json(dom)  # the DOM after load shows the JSON's numbers
    assert figures == assert_page_shows_the_json(page.read_text())
    charts = parse_page(dom).charts
    expected = {"chart-memory", "chart-timeline-0", "chart-trace"}
    if figures["operators"]["ran"]:
        expected.add("chart-operators")
        steps = len(figures["operators"]["rows"])
        assert charts["chart-operators"] > steps  # a bar per operator, and the axes
    assert expected <= set(charts) and all(charts[c] > 3 for c in expected)
    assert "Fits nucleo-f767" in dom and "data-figure" in dom


def test_the_console_check_sees_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><p>x</p><script>console.error('broken page')</script>")
    assert any(
        "broken page" in line for line in console(chromium("--dump-dom", bad.as_uri()).stderr)
    )


def test_the_screenshot_is_a_full_page_and_not_blank(page: Path, tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "report.png"
    done = chromium(f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}", page.as_uri())
    assert done.returncode == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(png) as image:
        assert image.size == (WIDTH, HEIGHT)
        rgb = image.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 100  # text, bars and charts, not blank
        green = rgb.getpixel((WIDTH // 2, 150))  # inside the verdict banner's pale green
        assert isinstance(green, tuple) and green[1] > green[0] and green[1] > green[2]
