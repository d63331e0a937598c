"""`mcugen sweep` (issue 36): a small sweep of generated models (two that fit, one too big for
the netduinoplus2's 128 KB of RAM, one with an operator the runtime lacks, one that is not a
model) on two boards; a re-run does no work; a killed sweep resumes to the byte-identical table;
the worker count and Ray do not change it; a worker killed mid-job is retried; bad flags are
one error line."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mcugen import cli
from mcugen.model.tflite_write import write_model
from support import ROOT, int8_classifier
from support.op_models import custom_model

BOARDS = "nucleo-f767,netduinoplus2"


def _models(folder: Path) -> Path:
    folder.mkdir()
    for seed in (1, 2):
        (folder / f"clf{seed}.tflite").write_bytes(write_model(int8_classifier(seed=seed)))
    big = int8_classifier(seed=3, depth=150_000, hidden=4)  # a 150 KB input: not in 128 KB
    (folder / "big.tflite").write_bytes(write_model(big))
    (folder / "custom.tflite").write_bytes(
        custom_model("NoSuchOp", [((1, 8), "int8")], [((1, 8), "int8")], b"")
    )
    (folder / "broken.tflite").write_bytes(b"not a model at all")
    return folder


def _argv(models: Path, db: Path, *extra: str) -> list[str]:
    return [
        "sweep",
        str(models),
        "--boards",
        BOARDS,
        "--jobs",
        "plan,estimate",
        "-o",
        str(db),
        *extra,
    ]


def _mcugen(argv: list[str], **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "mcugen.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        **kwargs,
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The models folder and the table of one uninterrupted sweep on 2 workers."""
    root = tmp_path_factory.mktemp("sweep")
    models = _models(root / "models")
    done = subprocess.run(
        [sys.executable, "-m", "mcugen.cli", *_argv(models, root / "ref.sqlite", "--workers", "2")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return models, done.stdout


def _row(table: str, model: str, board: str, job: str) -> list[str]:
    return next(
        line.split()
        for line in table.splitlines()
        if line.split()[:4] == [model, board, "defaults", job]
    )


def test_failures_are_rows_with_their_reason(reference: tuple[Path, str]) -> None:
    models, table = reference
    assert len(table.split("\n\n")[0].splitlines()) == 1 + 5 * 2 * 2
    assert _row(table, "clf1.tflite", "nucleo-f767", "plan")[4] == "ok"
    assert _row(table, "big.tflite", "netduinoplus2", "plan")[4] == "no-fit"
    assert "RAM needs at least" in " ".join(_row(table, "big.tflite", "netduinoplus2", "plan"))
    assert _row(table, "big.tflite", "nucleo-f767", "estimate")[4] == "ok"
    assert _row(table, "custom.tflite", "nucleo-f767", "plan")[4] == "unsupported"
    assert "NoSuchOp" in " ".join(_row(table, "custom.tflite", "netduinoplus2", "estimate"))
    assert _row(table, "broken.tflite", "nucleo-f767", "plan")[4] == "bad-model"
    page = (models.parent / "ref.html").read_text()
    assert page.count("<svg") == 4 and "clf1.tflite" in page


def test_a_rerun_does_no_work_and_prints_the_same_table(
    reference: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    models, table = reference
    db = models.parent / "ref.sqlite"
    start = time.monotonic()
    assert cli.main(_argv(models, db, "--workers", "1")) == 0
    out, err = capsys.readouterr()
    assert out == table and "0 jobs run" in err and "20 already" in err
    assert time.monotonic() - start < 5


def test_one_worker_gives_the_same_table_and_timings_apart(
    reference: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models, table = reference
    assert cli.main(_argv(models, tmp_path / "one.sqlite", "--workers", "1")) == 0
    assert capsys.readouterr().out == table
    db = sqlite3.connect(tmp_path / "one.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("SELECT count(*) FROM timings WHERE seconds > 0").fetchone() == (20,)
    columns = [c[1] for c in db.execute("PRAGMA table_info(results)")]
    assert "seconds" not in columns and columns[:5] == [
        "model_sha256", "board", "options", "job", "version",
    ]  # fmt: skip


def test_a_killed_sweep_resumes_to_the_same_table(
    reference: tuple[Path, str], tmp_path: Path
) -> None:
    models, table = reference
    db = tmp_path / "killed.sqlite"
    proc = _mcugen(_argv(models, db, "--workers", "1"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _count(db) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, mid-sweep
    proc.communicate()
    assert 3 <= _count(db) < 20
    out, err = _mcugen(_argv(models, db, "--workers", "2")).communicate()
    assert out == table, err
    assert "already in the results file" in err and " 0 jobs run" not in err


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return int(sqlite3.connect(db).execute("SELECT count(*) FROM results").fetchone()[0])
    except sqlite3.OperationalError:  # the tables are not made yet
        return 0


def test_a_worker_killed_mid_job_is_retried(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "clf.tflite").write_bytes(write_model(int8_classifier(seed=4)))
    db = tmp_path / "r.sqlite"
    argv = ["sweep", str(models), "--boards", "nucleo-f767", "--jobs", "build", "-o", str(db)]
    proc = _mcugen([*argv, "--workers", "1"])
    worker = _wait_for_child(proc.pid, "make")  # the worker, once its job compiles
    os.kill(worker, signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert out.splitlines()[1].split()[4] == "ok"
    attempts = sqlite3.connect(db).execute("SELECT attempts FROM timings").fetchall()
    assert attempts == [(2,)]


def _wait_for_child(pid: int, grandchild: str) -> int:
    """The child of `pid` that has a descendant named `grandchild` (waits up to a minute)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for child in _children(pid):
            if any(_name(d) == grandchild for d in _descendants(child)):
                return child
        time.sleep(0.02)
    raise AssertionError(f"no worker ran {grandchild}")


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(c) for c in task.read_text().split()]
    return found


def _descendants(pid: int) -> list[int]:
    kids = _children(pid) if Path(f"/proc/{pid}").exists() else []
    return kids + [d for k in kids for d in _descendants(k)]


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_ray_local_gives_the_same_table(reference: tuple[Path, str], tmp_path: Path) -> None:
    pytest.importorskip("ray")
    models, table = reference
    out, err = _mcugen(
        _argv(models, tmp_path / "ray.sqlite", "--ray", "local", "--workers", "2")
    ).communicate(timeout=600)
    assert out == table, err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--jobs", "plan,fly"], "unknown job 'fly'; choose plan, estimate, build, run, verify"),
        (["--boards", "no-such-board"], "no-such-board"),
        (["--workers", "0"], "--workers"),
        (["--grid", "GRID:[options]\nkernels = ['fast']"], "kernels is one of"),
        (["--grid", "GRID:[options]\ncolour = 'red'"], "unknown planning option 'colour'"),
        (["--grid", "GRID:[options\n"], "not a TOML file"),
        (["--grid", "GRID:[sizes]\nx = 1"], "unknown table 'sizes'"),
        (["-o", "NOTDB"], "is not a sweep's results file"),
    ],
)
def test_bad_flags_are_one_line_exit_2(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "m.tflite").write_bytes(write_model(int8_classifier(seed=5)))
    argv = ["sweep", str(models), "--boards", "nucleo-f767", "-o", str(tmp_path / "r.sqlite")]
    for k, word in enumerate(extra):
        if word.startswith("GRID:"):
            (tmp_path / "grid.toml").write_text(word[5:])
            extra[k] = str(tmp_path / "grid.toml")
        elif word == "NOTDB":
            (tmp_path / "notes.txt").write_text("mine")
            extra[k] = str(tmp_path / "notes.txt")
    try:
        code = cli.main([*argv, *extra])
    except SystemExit as exc:  # argparse's own checks (`--workers 0`) exit from the parser
        code = int(exc.code or 0)
    assert code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and message in err, err
    assert err.startswith("mcugen: error: ") and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_a_grid_runs_every_combination(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "m.tflite").write_bytes(write_model(int8_classifier(seed=6)))
    grid = tmp_path / "grid.toml"
    grid.write_text('[options]\nkernels = ["opt", "reference"]\norder = "stored"\n\n[[set]]\n')
    argv = ["sweep", str(models), "--boards", "nucleo-f767", "--jobs", "estimate", "--grid"]
    assert cli.main([*argv, str(grid), "-o", str(tmp_path / "r.sqlite"), "--workers", "1"]) == 0
    rows = capsys.readouterr().out.split("\n\n")[0].splitlines()[1:]
    assert [r.split()[2] for r in rows] == [  # sorted by the options' canonical JSON
        'kernels="opt",order="stored"',
        'kernels="reference",order="stored"',
        "defaults",
    ]
    assert np.all([r.split()[4] == "ok" for r in rows])
