"""A sweep's results in one SQLite file (WAL): a row per job, committed as it arrives, so a killed
sweep loses nothing and a re-run skips what is done.

`results` holds what is compared from run to run (status, reason, figures), keyed by the model's
content hash, the board, the options, the job and mcugen's version; `timings` holds what is not
(wall-clock seconds, attempts, when), under the same key.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcugen.errors import McugenError
from mcugen.sweep.grid import Job
from mcugen.sweep.jobs import Result

KEY = "model_sha256, board, options, job, version"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS results (
    model_sha256 TEXT NOT NULL, board TEXT NOT NULL, options TEXT NOT NULL, job TEXT NOT NULL,
    version TEXT NOT NULL, model TEXT NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL,
    figures TEXT NOT NULL, PRIMARY KEY ({KEY}));
CREATE TABLE IF NOT EXISTS timings (
    model_sha256 TEXT NOT NULL, board TEXT NOT NULL, options TEXT NOT NULL, job TEXT NOT NULL,
    version TEXT NOT NULL, seconds REAL NOT NULL, attempts INTEGER NOT NULL,
    finished REAL NOT NULL, PRIMARY KEY ({KEY}));
"""


class Store:
    """The results file, open for the sweep's life (one writer: the process that runs it)."""

    def __init__(self, path: Path) -> None:
        try:
            self.db = sqlite3.connect(path, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise McugenError(
                f"not a sweep results file ({exc})", where=str(path), hint="name a new .sqlite file"
            ) from None

    def close(self) -> None:
        self.db.close()

    def done(self) -> set[tuple[str, ...]]:
        return {tuple(row) for row in self.db.execute(f"SELECT {KEY} FROM results")}

    def add(self, result: Result) -> None:
        """Record one result and commit it at once."""
        j = result.job
        key = (j.model_sha256, j.board, j.options, j.job, j.version)
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, j.model_name, result.status, result.reason, result.figures_json),
            )
            self.db.execute(
                "INSERT OR REPLACE INTO timings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, result.seconds, result.attempts, time.time()),
            )

    def rows(self, jobs: Iterable[Job]) -> list[dict[str, Any]]:
        """The stored results of `jobs` in the jobs' order (sorted: model, board, options, job);
        jobs without a result are left out."""
        stored = {
            tuple(r[:5]): r[5:]
            for r in self.db.execute(f"SELECT {KEY}, model, status, reason, figures FROM results")
        }
        found = []
        for j in jobs:
            hit = stored.get(j.key)
            if hit is not None:
                model, status, reason, figures = hit
                found.append(
                    {
                        "model": j.model_name,
                        "board": j.board,
                        "options": j.options,
                        "job": j.job,
                        "status": status,
                        "reason": reason,
                        **json.loads(figures),
                    }
                )
        return found

    def seconds(self, jobs: Iterable[Job]) -> list[float]:
        wanted = {j.key for j in jobs}
        return [
            s
            for *key, s in self.db.execute(f"SELECT {KEY}, seconds FROM timings")
            if tuple(key) in wanted
        ]
