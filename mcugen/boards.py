"""Boards are data: each `boards/<name>/board.toml` describes a target; this module reads them."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from mcugen.errors import McugenError
from mcugen.resources import boards_dir


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    core: str
    cc: str
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...]
    emulator: str
    directory: Path

    @property
    def is_host(self) -> bool:
        return self.core == "host"


def board_names() -> list[str]:
    root = boards_dir()
    return sorted(p.name for p in root.iterdir() if (p / "board.toml").is_file())


def load_board(name: str) -> Board:
    path = boards_dir() / name / "board.toml"
    if not path.is_file():
        raise McugenError(
            f"unknown board '{name}'", hint=f"choose one of: {', '.join(board_names())}"
        )
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise McugenError(f"board description is invalid ({exc})", where=str(path)) from None
    return Board(
        name=data.get("name", name),
        description=data.get("description", ""),
        core=data["core"],
        cc=data["cc"],
        cflags=tuple(data.get("cflags", [])),
        ldflags=tuple(data.get("ldflags", [])),
        emulator=data.get("emulator", ""),
        directory=path.parent,
    )
