"""A sweep's results as text: the results table (a row per job, sorted by model, board, options
and job; no wall-clock figure, so it is byte-identical however the sweep ran: interrupted and
resumed, on any number of workers, on Ray) and a summary of the statuses per board and job."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from mcugen.sweep.jobs import FIGURES, OK

HEADERS = {
    "arena": "arena B",
    "ram": "RAM B",
    "flash": "flash B",
    "instructions": "instructions",
    "ms": "est. ms",
    "uj": "est. uJ",
}


def options_label(options: str) -> str:
    """An option set in a few characters: "defaults", or name=value pairs."""
    chosen: dict[str, Any] = json.loads(options)
    if not chosen:
        return "defaults"
    return ",".join(f"{k}={json.dumps(v) if isinstance(v, str) else v}" for k, v in chosen.items())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}"
    return f"{value:,}"


def results_table(rows: Sequence[dict[str, Any]]) -> str:
    """Fixed-width columns, one row per result, the reason last."""
    head = ["model", "board", "options", "job", "status", *HEADERS.values(), "reason"]
    body = [
        [
            r["model"],
            r["board"],
            options_label(r["options"]),
            r["job"],
            r["status"],
            *(_cell(r.get(f)) for f in FIGURES),
            r["reason"],
        ]
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in [head, *body]) for i in range(len(head) - 1)]
    numeric = range(5, 5 + len(FIGURES))
    lines = []
    for line in [head, *body]:
        cells = [
            (str(c).rjust(w) if i in numeric else str(c).ljust(w))
            for i, (c, w) in enumerate(zip(line, widths, strict=False))
        ]
        lines.append("  ".join([*cells, str(line[-1])]).rstrip())
    return "\n".join(lines)


def summary_table(rows: Sequence[dict[str, Any]]) -> str:
    """Per board and job: how many results of each status."""
    statuses = sorted({r["status"] for r in rows}, key=lambda s: (s != OK, s))
    counts = Counter((r["board"], r["job"], r["status"]) for r in rows)
    pairs = sorted({(r["board"], r["job"]) for r in rows})
    head = ["board", "job", *statuses]
    body = [[b, j, *(str(counts[(b, j, s)]) for s in statuses)] for b, j in pairs]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in [head, *body]
    )
