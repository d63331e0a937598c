"""`mcugen boards [BOARD]`: the boards mcugen knows, their limits and how they run; for one board,
its memories with their costs and sources."""

from __future__ import annotations

import argparse

from mcugen.boards import Board, board_names, load_board

HELP = "list the boards and their limits"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "board", nargs="?", help="one board: its memories, what they cost and where that is from"
    )


def cmd_boards(args: argparse.Namespace) -> int:
    if getattr(args, "board", None):
        return _one_board(load_board(args.board))
    print(f"{'board':16} {'core':10} {'flash':>9} {'RAM':>9} {'clock':>8}  emulation")
    for name in board_names():
        b = load_board(name)
        if b.is_host:
            print(f"{name:16} {'host':10} {'-':>9} {'-':>9} {'-':>8}  runs as a process")
            continue
        assert b.flash and b.ram
        emu = f"QEMU {b.emulator}" if b.emulator else (f"twin on {b.twin}" if b.twin else "none")
        print(
            f"{name:16} {b.core:10} {b.flash.size // 1024:>7}KB {b.ram.size // 1024:>7}KB "
            f"{b.clock_hz / 1e6:>5.0f}MHz  {emu}"
        )
    return 0


def _one_board(b: Board) -> int:
    print(b.description or b.name)
    if b.timestamp_pin:
        print(f"MLPerf Tiny energy-mode timestamp pin: {b.timestamp_pin}")
    if not b.memories:
        print("no memories declared: the planner uses one RAM region (`[memory] ram`)")
        return 0
    print("cycles per byte read and written by the CPU streaming a buffer, as the board declares")
    print(
        f"{'memory':8} {'kind':6} {'origin':>10} {'size':>10}  {'use':8} "
        f"{'read':>5} {'write':>5}  QEMU twin"
    )
    for m in b.memories:
        use = ("in place" if m.writable else "read") if m.mapped else "copies"
        write = (
            f"{m.write_cycles_per_byte:5.2f}" if m.write_cycles_per_byte is not None else "    -"
        )
        twin = f"0x{m.twin.origin:08X}" if m.twin else "none"
        print(
            f"{m.name:8} {m.kind:6} 0x{m.origin:08X} {m.size:>10,}  {use:8} "
            f"{m.read_cycles_per_byte:5.2f} {write}  {twin}"
        )
    print("sources:")
    for m in b.memories:
        print(f"  {m.name}: {m.source}")
    return 0
