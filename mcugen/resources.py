"""Where the C runtime, boards and templates live: inside the wheel, or in the source tree."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def runtime_dir() -> Path:
    return _data_dir("runtime_c")


def boards_dir() -> Path:
    return _data_dir("boards")


def templates_dir() -> Path:
    return _PACKAGE / "codegen" / "templates"
