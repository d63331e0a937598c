"""Boards are data: each `boards/<name>/board.toml` describes a target; this module reads them.

A board may name an emulated `twin` (a QEMU machine with the same core): building with
`emulate=True` then uses the twin's console port and memory origins with the real board's sizes, so
a model that does not fit the real board does not fit its twin either.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcugen.energy import EnergyModel, energy_model
from mcugen.errors import McugenError
from mcugen.resources import boards_dir


@dataclass(frozen=True)
class Region:
    origin: int
    size: int


#: What a memory is made of; the planner ranks them by their costs, not by kind.
MEMORY_KINDS = ("TCM", "SRAM", "SDRAM", "PSRAM", "QSPI", "flash")


@dataclass(frozen=True)
class Memory:
    """One memory of a board (`[[memories]]` in board.toml) and what using it costs.

    `mapped`: kernels may read (and, if `writable`, write) buffers there in place; otherwise data
    only moves to and from it by copies. Costs are CPU cycles per byte streamed, and picojoules per
    byte when measured (None until then); `source` cites where the figures come from."""

    name: str
    kind: str
    origin: int
    size: int
    mapped: bool = True
    writable: bool = True
    read_cycles_per_byte: float = 0.0
    write_cycles_per_byte: float | None = None  # None: not writable
    energy_pj_per_byte: float | None = None
    source: str = ""
    #: where the board's QEMU twin places this memory (origin, size), None when the twin has none
    twin: Region | None = None
    #: the board's port sets the memory up (an external memory needs its controller started);
    #: False: only the twin may use it
    port_ready: bool = True

    @property
    def end(self) -> int:
        return self.origin + self.size


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    core: str
    cc: str
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...]
    directory: Path
    clock_hz: int = 0
    stack_bytes: int = 8192
    #: RAM of the app, runtime and this board's port whatever the model (.data + .bss besides the
    #: arena and the model-sized buffers; plan/fit.py adds those), measured with the linker.
    firmware_ram: int = 0
    port: tuple[str, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    flash: Region | None = None
    ram: Region | None = None
    emulator: str = ""  # QEMU machine that runs this board's own image, "" if none
    twin: str = ""  # board whose QEMU machine emulates this one
    console: str = ""
    cycle_counter: str = ""
    #: where MLPerf Tiny energy mode's timestamp edges come out, "" when the port has no such pin
    timestamp_pin: str = ""
    #: board-to-board link UARTs the port drives in multi-board builds (MCU_LINKS), 0 if none
    link_uarts: int = 0
    flash_tool: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: the memories the planner may place buffers in, fastest first as the board lists them
    memories: tuple[Memory, ...] = ()
    #: time and energy per inference estimated from twin instructions ([energy]), None if unknown
    energy: EnergyModel | None = None

    @property
    def is_host(self) -> bool:
        return self.core == "host"

    def port_sources(self) -> list[Path]:
        return [(self.directory / p).resolve() for p in self.port]


@dataclass(frozen=True)
class Target:
    """What a build is for: the board, and how it runs (its own image, or its emulated twin)."""

    board: Board  # the board whose limits apply
    port_board: Board  # the board whose port, flags and memory origins are compiled in
    emulate: bool
    flash: Region
    ram: Region
    #: the board's memories where this build runs them: on the twin at the twin's origins (the
    #: real board's sizes, or the twin's when smaller), memories the twin lacks left out
    memories: tuple[Memory, ...] = ()
    #: the MLPerf Tiny timestamp mode the firmware is built for (MLPERF_MODES, `with_mlperf_mode`)
    mlperf_mode: str = "performance"
    #: firmware of a multi-board run: INVOKE runs an operator range (a phase of the board's part)
    multiboard: bool = False
    #: board-to-board link UARTs built in (multi-board runs, `Board.link_uarts`), 0 for none
    links: int = 0

    @property
    def machine(self) -> str:
        return self.port_board.emulator

    @property
    def label(self) -> str:
        if not self.emulate or self.port_board is self.board:
            return self.board.name
        return f"{self.board.name} (QEMU twin on {self.machine})"


#: MLPerf Tiny (EEMBC EnergyRunner) timestamp modes: performance (m-lap-us lines at 115200 baud,
#: the default) and energy (GPIO edges for a power monitor, 9600 baud).
MLPERF_MODES = ("performance", "energy")
#: The console's baud rate in each mode (EEMBC's runner talks to an energy-mode DUT at 9600
#: through its IO manager, so that the UART draws little current while the power is measured).
CONSOLE_BAUD = {"performance": 115200, "energy": 9600}


def with_mlperf_mode(target: Target, mode: str) -> Target:
    """`target` built for MLPerf Tiny timestamp `mode`; energy mode needs a timestamp pin
    (`Board.timestamp_pin`) on the board, and on its twin when emulating."""
    if mode not in MLPERF_MODES:
        raise McugenError(f"unknown MLPerf mode '{mode}'", hint=f"choose one of: {MLPERF_MODES}")
    if mode == "energy" and not (target.board.timestamp_pin and target.port_board.timestamp_pin):
        raise McugenError(
            f"{target.label} has no timestamp pin for MLPerf Tiny energy mode",
            hint="use --mlperf-mode performance, or a board with one (`mcugen boards BOARD` "
            "names it, e.g. nucleo-f767)",
        )
    return replace(target, mlperf_mode=mode)


def board_names() -> list[str]:
    root = boards_dir()
    return sorted(p.name for p in root.iterdir() if (p / "board.toml").is_file())


def load_board(name: str) -> Board:
    path = boards_dir() / name / "board.toml"
    if not path.is_file():
        known = ", ".join(board_names())
        raise McugenError(f"unknown board '{name}'", hint=f"choose one of: {known}")
    try:
        data = tomllib.loads(path.read_text())
        return _board_from_toml(data, name, path.parent)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise McugenError(f"board description is invalid ({exc})", where=str(path)) from None


def _memory(entry: dict[str, Any]) -> Memory:
    """One `[[memories]]` table, checked: a known kind, a positive size, non-negative costs."""
    unknown = set(entry) - set(Memory.__dataclass_fields__)
    if unknown:
        raise ValueError(f"memory {entry.get('name', '?')}: unknown keys {sorted(unknown)}")
    kind = entry["kind"]
    if kind not in MEMORY_KINDS:
        raise ValueError(f"memory {entry['name']}: kind {kind!r} is not one of {MEMORY_KINDS}")
    writable = bool(entry.get("writable", True))
    write = entry.get("write_cycles_per_byte")
    if writable and write is None:
        raise ValueError(f"memory {entry['name']}: a writable memory needs write_cycles_per_byte")
    twin = entry.get("twin")
    memory = Memory(
        name=str(entry["name"]),
        kind=kind,
        origin=int(entry["origin"]),
        size=int(entry["size"]),
        mapped=bool(entry.get("mapped", True)),
        writable=writable,
        read_cycles_per_byte=float(entry["read_cycles_per_byte"]),
        write_cycles_per_byte=float(write) if writable and write is not None else None,
        energy_pj_per_byte=(
            float(entry["energy_pj_per_byte"]) if "energy_pj_per_byte" in entry else None
        ),
        source=str(entry.get("source", "")),
        twin=Region(int(twin["origin"]), int(twin["size"])) if twin else None,
        port_ready=bool(entry.get("port_ready", True)),
    )
    costs = [memory.read_cycles_per_byte, memory.write_cycles_per_byte or 0.0]
    if memory.size <= 0 or min(costs) < 0 or not memory.source:
        raise ValueError(f"memory {memory.name}: size must be positive, costs >= 0, source given")
    return memory


def _memories(data: dict[str, Any]) -> tuple[Memory, ...]:
    memories = tuple(_memory(m) for m in data.get("memories", []))
    names = [m.name for m in memories]
    if len(set(names)) != len(names):
        raise ValueError(f"memory names repeat: {names}")
    spans = sorted((m.origin, m.end, m.name) for m in memories)
    for (_, end, a), (start, _, b) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise ValueError(f"memories {a} and {b} overlap")
    return memories


def _region(data: dict[str, Any], key: str) -> Region | None:
    r = data.get("memory", {}).get(key)
    return Region(int(r["origin"]), int(r["size"])) if r else None


def _board_from_toml(data: dict[str, Any], name: str, directory: Path) -> Board:
    known = {
        "name",
        "description",
        "core",
        "cc",
        "cflags",
        "ldflags",
        "clock_hz",
        "stack_bytes",
        "firmware_ram",
        "port",
        "defines",
        "memory",
        "emulator",
        "console",
        "cycle_counter",
        "timestamp_pin",
        "link_uarts",
        "flash_tool",
        "memories",
        "energy",
    }
    emulator = data.get("emulator", {})
    return Board(
        name=data.get("name", name),
        description=data.get("description", ""),
        core=data["core"],
        cc=data["cc"],
        cflags=tuple(data.get("cflags", [])),
        ldflags=tuple(data.get("ldflags", [])),
        directory=directory,
        clock_hz=int(data.get("clock_hz", 0)),
        stack_bytes=int(data.get("stack_bytes", 8192)),
        firmware_ram=int(data.get("firmware_ram", 0)),
        port=tuple(data.get("port", [])),
        defines=tuple((k, str(v)) for k, v in data.get("defines", {}).items()),
        flash=_region(data, "flash"),
        ram=_region(data, "ram"),
        emulator=emulator.get("machine", "") if isinstance(emulator, dict) else "",
        twin=emulator.get("twin", "") if isinstance(emulator, dict) else "",
        console=data.get("console", ""),
        cycle_counter=data.get("cycle_counter", ""),
        timestamp_pin=data.get("timestamp_pin", ""),
        link_uarts=int(data.get("link_uarts", 0)),
        flash_tool=data.get("flash_tool", ""),
        memories=_memories(data),
        energy=energy_model(data.get("energy"), name),
        extra={k: v for k, v in data.items() if k not in known},
    )


def resolve_target(board: Board, *, emulate: bool) -> Target:
    """The effective build settings for `board`, natively or on its emulated twin."""
    if board.is_host:
        if emulate:
            raise McugenError("the host board has no emulator", hint="drop --emulate")
        return Target(board, board, False, Region(0, 0), Region(0, 0))
    assert board.flash is not None and board.ram is not None
    if not emulate:
        return Target(board, board, False, board.flash, board.ram, board.memories)
    if board.emulator:
        return Target(board, board, True, board.flash, board.ram, board.memories)
    if not board.twin:
        raise McugenError(
            f"board '{board.name}' has no emulated twin",
            hint="run it on the board with --port, or pick an mps2/mps3 board",
        )
    twin = load_board(board.twin)
    assert twin.flash is not None and twin.ram is not None
    flash = Region(twin.flash.origin, min(board.flash.size, twin.flash.size))
    ram = Region(twin.ram.origin, min(board.ram.size, twin.ram.size))
    return Target(board, twin, True, flash, ram, twin_memories(board.memories))


def twin_memories(memories: tuple[Memory, ...]) -> tuple[Memory, ...]:
    """`memories` where the QEMU twin holds them (`Memory.twin`), at most the twin's size."""
    return tuple(
        replace(m, origin=m.twin.origin, size=min(m.size, m.twin.size))
        for m in memories
        if m.twin is not None
    )
