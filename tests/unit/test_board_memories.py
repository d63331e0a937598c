"""Boards as data: the memories a board declares (issue 11), checked when the board is loaded, and
`mcugen boards [BOARD]`."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import pytest

from mcugen import cli
from mcugen.boards import _board_from_toml, board_names, load_board
from mcugen.resources import boards_dir

INTERNAL_SRAM = ("TCM", "SRAM")


@pytest.mark.parametrize(("board", "ram"), [("nucleo-f767", 512), ("disco-f746ng", 320)])
def test_internal_memories_tile_the_ram_region(board: str, ram: int) -> None:
    """DTCM, SRAM1 and SRAM2 lie back to back and make up the linker's RAM region exactly."""
    b = load_board(board)
    assert b.ram is not None
    internal = sorted((m for m in b.memories if m.kind in INTERNAL_SRAM), key=lambda m: m.origin)
    assert [m.name for m in internal] == ["dtcm", "sram1", "sram2"]
    assert internal[0].origin == b.ram.origin and sum(m.size for m in internal) == ram * 1024
    assert all(a.end == c.origin for a, c in zip(internal, internal[1:], strict=False))
    # each has a twin place, its source cited, and the fast one is the TCM
    assert all(m.twin is not None and m.source for m in b.memories)
    assert min(b.memories, key=lambda m: m.read_cycles_per_byte).kind in ("TCM", "flash")


def test_disco_declares_its_external_memories() -> None:
    b = load_board("disco-f746ng")
    mem = {m.name: m for m in b.memories}
    assert mem["sdram"].size == 8 << 20 and mem["sdram"].writable
    assert mem["qspi"].size == 16 << 20 and not mem["qspi"].writable
    assert mem["qspi"].write_cycles_per_byte is None
    assert mem["sdram"].twin is not None and mem["sdram"].twin.origin == 0x60000000  # PSRAM


def _toml(board: str) -> dict[str, Any]:
    return tomllib.loads((boards_dir() / board / "board.toml").read_text())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m[0].update(kind="DRAM"), "kind 'DRAM' is not one of"),
        (lambda m: m[1].update(origin=m[0]["origin"] + 16), "overlap"),
        (lambda m: m[0].update(source=""), "source given"),
        (lambda m: m[0].update(size=0), "size must be positive"),
        (lambda m: m[0].update(read_cycles_per_byte=-1.0), "costs >= 0"),
        (lambda m: m[0].pop("write_cycles_per_byte"), "needs write_cycles_per_byte"),
        (lambda m: m[0].update(speed=3), "unknown keys"),
        (lambda m: m[1].update(name="dtcm"), "names repeat"),
    ],
)
def test_a_wrong_memory_is_refused(change: Any, message: str) -> None:
    data = copy.deepcopy(_toml("nucleo-f767"))
    change(data["memories"])
    with pytest.raises(ValueError, match=message):
        _board_from_toml(data, "nucleo-f767", Path("."))


def test_every_board_loads() -> None:
    for name in board_names():
        load_board(name)


def test_cli_shows_a_boards_memories(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["boards", "disco-f746ng"]) == 0
    out = capsys.readouterr().out
    for name in ("dtcm", "sram1", "sram2", "sdram", "qspi", "flash"):
        assert f"\n{name} " in out and f"  {name}: " in out
    assert "0xC0000000" in out and "0x60000000" in out
    assert cli.main(["boards", "mps2-an500"]) == 0
    assert "no memories declared" in capsys.readouterr().out
    assert cli.main(["boards", "nosuch"]) == 2
    assert "unknown board 'nosuch'" in capsys.readouterr().err
