"""The test suite's own layout: every test module sits in one of the seven folders, basenames are
unique (pytest imports them by basename, without packages), and no test module imports another:
helpers shared by several modules live in the tests/support/ package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support import ROOT

TESTS = ROOT / "tests"
FOLDERS = ("unit", "planners", "kernels", "train", "c", "qemu", "cli")


def collected_modules() -> list[Path]:
    """Every file pytest collects as a test module (its default `test_*.py` and `*_test.py`)."""
    found = set(TESTS.rglob("test_*.py")) | set(TESTS.rglob("*_test.py"))
    return sorted(p for p in found if "__pycache__" not in p.parts)


def misplaced(paths: list[Path]) -> list[str]:
    """The paths (relative to tests/) not directly inside one of FOLDERS."""
    relative = [p.relative_to(TESTS) for p in paths]
    return [str(r) for r in relative if len(r.parts) != 2 or r.parts[0] not in FOLDERS]


def imported_test_modules(source: str) -> list[str]:
    """The test modules `source` imports: any top-level module named test_* or *_test, and any
    relative import (the tests are not a package, so those could only reach another test file)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level > 0:
                found.append("." * node.level + (node.module or ""))
                continue
            names = [node.module or ""]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top.startswith("test_") or top.endswith("_test"):
                found.append(name)
    return found


def test_every_test_module_is_in_one_of_the_seven_folders() -> None:
    paths = collected_modules()
    assert len(paths) > 40, "test modules not found"
    assert misplaced(paths) == [], f"test modules belong in tests/{{{','.join(FOLDERS)}}}/"


def test_test_module_basenames_are_unique() -> None:
    names = [p.name for p in collected_modules()]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_no_test_module_imports_another() -> None:
    helpers = sorted((TESTS / "support").glob("*.py")) + sorted(
        (TESTS / "instruments").glob("*.py")
    )
    sources = [*collected_modules(), *helpers, TESTS / "conftest.py"]
    offenders = {
        str(p.relative_to(TESTS)): imported
        for p in sources
        if (imported := imported_test_modules(p.read_text()))
    }
    assert offenders == {}, "move shared helpers into tests/support/"


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("from test_add import binary_model", ["test_add"]),
        ("import test_plan", ["test_plan"]),
        ("import numpy, test_plan as plan", ["test_plan"]),
        ("from helpers_test import x", ["helpers_test"]),
        ("from . import test_add", ["."]),
        ("from .test_add import Operand", [".test_add"]),
        ("def f():\n    from test_aliasing import Net\n", ["test_aliasing"]),
        ("from support import assert_matches_tflm", []),
        ("import pytest\nfrom mcugen.plan.order import ORDERS", []),
        ("from hypothesis import strategies as st", []),
    ],
)
def test_import_check_flags_test_modules(source: str, flagged: list[str]) -> None:
    assert imported_test_modules(source) == flagged


def test_folder_check_flags_stray_modules() -> None:
    paths = [
        TESTS / "kernels" / "test_add.py",
        TESTS / "test_add.py",
        TESTS / "golden" / "test_x.py",
        TESTS / "unit" / "deeper" / "test_y.py",
    ]
    assert misplaced(paths) == ["test_add.py", "golden/test_x.py", "unit/deeper/test_y.py"]
