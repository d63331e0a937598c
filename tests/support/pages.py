"""HTML report pages (mcugen report): the figures a page shows against its embedded JSON."""

from __future__ import annotations

import json
import math
from html.parser import HTMLParser
from typing import Any

# --- HTML report pages (mcugen report) --------------------------------------------------------


class PageParser(HTMLParser):
    """The embedded figures, every `data-figure` element's text, and the SVG charts by id."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: dict[str, str] = {}
        self.charts: dict[str, int] = {}  # svg id -> shapes in it
        self.json_text = ""
        self.urls: list[str] = []
        self._figure: str | None = None
        self._in_json = False
        self._svg: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.urls += [v or "" for k, v in attrs if k in ("src", "href")]
        if "data-figure" in a:
            self._figure = a["data-figure"]
            self.shown[self._figure or ""] = ""
        if tag == "script" and a.get("id") == "figures":
            self._in_json = True
        if tag == "svg":
            self._svg = a.get("id") or ""
            self.charts[self._svg] = 0
        elif self._svg is not None and tag in ("rect", "line", "polyline", "text"):
            self.charts[self._svg] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "span":
            self._figure = None
        if tag == "script":
            self._in_json = False
        if tag == "svg":
            self._svg = None

    def handle_data(self, data: str) -> None:
        if self._figure is not None:
            self.shown[self._figure] += data
        if self._in_json:
            self.json_text += data


def parse_page(html: str) -> PageParser:
    parser = PageParser()
    parser.feed(html)
    return parser


def at(figures: Any, path: str) -> Any:
    for key in path.split("."):
        figures = figures[int(key)] if isinstance(figures, list) else figures[key]
    return figures


def assert_page_shows_the_json(html: str) -> dict[str, Any]:
    """Every figure the page shows is the embedded JSON's, as the page formats it
    (report.html.render.number); returns the embedded figures."""
    page = parse_page(html)
    figures = json.loads(page.json_text)
    assert len(page.shown) > 10
    for path, text in page.shown.items():
        value = at(figures, path)
        if value is None:
            assert text == "-", path
            continue
        shown = float(text.replace(",", ""))
        decimals = len(text.split(".")[1]) if "." in text else 0
        assert math.isclose(shown, round(value, decimals), abs_tol=10**-decimals / 2), path
    return figures
