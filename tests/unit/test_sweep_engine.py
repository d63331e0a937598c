"""The sweep engine (mcugen/sweep/engine.py, store.py, table.py) without mcugen's work: a job
function that answers at once, dies once, or dies every time; the store's resume and order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcugen.sweep import engine
from mcugen.sweep.grid import Job, canonical, option_sets
from mcugen.sweep.jobs import CRASHED, OK, Result
from mcugen.sweep.store import Store
from mcugen.sweep.table import results_table


def _jobs(names: list[str], tmp: Path) -> list[Job]:
    return [Job(n, "nucleo-f767", "{}", "plan", n * 8, str(tmp / n)) for n in names]


def fake_job(job: Job) -> Result:
    """Dies when the job's name says so: "die" always, "once" the first time only."""
    marker = Path(job.model_path + ".tried")
    if job.model_name == "die" or (job.model_name == "once" and not marker.exists()):
        marker.touch()
        os._exit(9)
    return Result(job, OK, "", {"arena": len(job.model_name)}, seconds=0.01)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_dying_job_is_retried_once_alone(
    workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "run_job", fake_job)
    got: list[Result] = []
    engine.run_pool(_jobs(["a", "once", "b", "die", "c"], tmp_path), got.append, workers=workers)
    by_name = {r.job.model_name: r for r in got}
    assert sorted(by_name) == ["a", "b", "c", "die", "once"] and len(got) == 5
    assert by_name["once"].status == OK and by_name["once"].attempts == 2
    assert by_name["die"].status == CRASHED and "died twice" in by_name["die"].reason
    assert by_name["a"].status == OK


def test_the_store_keeps_one_row_a_key_and_reads_in_job_order(tmp_path: Path) -> None:
    jobs = _jobs(["b", "a", "c"], tmp_path)
    store = Store(tmp_path / "r.sqlite")
    for job in reversed(jobs):
        store.add(Result(job, OK, "", {"arena": 1}, seconds=1.5))
    store.add(Result(jobs[0], OK, "", {"arena": 2}, seconds=2.5))
    assert len(store.done()) == 3
    rows = store.rows(sorted(jobs))
    assert [r["model"] for r in rows] == ["a", "b", "c"] and rows[1]["arena"] == 2
    assert sorted(store.seconds(jobs)) == [1.5, 1.5, 2.5]
    store.close()
    again = Store(tmp_path / "r.sqlite")
    assert again.rows(jobs[:1]) == [rows[1]] and "arena" in results_table(rows)


def test_grid_sets_are_canonical_and_deduplicated(tmp_path: Path) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text('[options]\norder = ["stored", "stored"]\n\n[[set]]\norder = "stored"\n')
    assert option_sets(grid) == [canonical({"order": "stored"})]
    assert option_sets(None) == ["{}"]
