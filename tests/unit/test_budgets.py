"""benchmarks/budgets.py, the CI budget check: a measurement above its budget fails, a missing
budget fails, one below passes, and --update writes what was measured."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from support import ROOT


def load_budgets() -> ModuleType:
    spec = importlib.util.spec_from_file_location("budgets", ROOT / "benchmarks" / "budgets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def budgets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = load_budgets()
    monkeypatch.setattr(module, "BUDGETS", tmp_path)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    measured = {"a": 100, "b": 50}
    monkeypatch.setattr(module, "KINDS", {"arena": lambda: dict(measured), "lines": lambda: {}})
    return module


def test_a_worse_or_missing_entry_fails_and_a_better_one_passes(budgets: ModuleType) -> None:
    path = budgets.BUDGETS / "arena.txt"
    path.write_text("# comment\na 100\nb 60\n")
    assert budgets.check("arena", update=False) == 0  # b is better, a equal
    path.write_text("a 99\nb 50\n")
    assert budgets.check("arena", update=False) == 1  # a is 1 over
    path.write_text("a 100\n")
    assert budgets.check("arena", update=False) == 1  # b has no budget
    assert budgets.main(["arena"]) == 1


def test_update_writes_what_was_measured_and_keeps_entries_not_measured(
    budgets: ModuleType,
) -> None:
    path = budgets.BUDGETS / "arena.txt"
    path.write_text("a 1\nc 7\n")
    assert budgets.main(["arena", "--update"]) == 0
    assert budgets.read_budget(path) == {"a": 100, "b": 50, "c": 7}
    assert budgets.main(["arena"]) == 0


def test_a_malformed_budget_line_is_refused(budgets: ModuleType) -> None:
    path = budgets.BUDGETS / "arena.txt"
    path.write_text("a lots\n")
    with pytest.raises(SystemExit, match="expected 'name value'"):
        budgets.read_budget(path)


def test_the_budget_files_in_the_repository_parse() -> None:
    module = load_budgets()
    for kind in module.KINDS:
        assert module.read_budget(ROOT / "budgets" / f"{kind}.txt"), kind
