"""`mcugen boards`: the boards mcugen knows, their limits and how they run."""

from __future__ import annotations

import argparse

from mcugen.boards import board_names, load_board


def cmd_boards(args: argparse.Namespace) -> int:
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
