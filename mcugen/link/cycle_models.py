"""Cycles estimated from the executed instruction mix (issue 32 item 5): one cost model per core,
each cost with the manual line it comes from, applied per operator with the board's flash wait
states and data cache (board.toml [cycles]).

Method: instruction_mix.py counts each operator's executed instructions by class, its data loads
by memory region and the flash lines a model of the board's data cache fills, on the QEMU twin;
a model here turns one operator's counts into cycles. The estimate of an inference is the sum of
its operators' (the invoke's few instructions between operators are left out).

The Cortex-M4 model (`CORTEX_M4`, the class costs in instruction_mix.M4_CYCLES) is a sum of the
TRM's per-instruction cycles; the module docstring of instruction_mix.py gives its errors.

The Cortex-M7 model (`CORTEX_M7`). The Cortex-M7 TRM (ARM DDI 0489F, r1p2) publishes no
instruction cycle table as the M4's does; what it states and this model takes: an in-order,
six-stage, dual-issue superscalar pipeline (1.2 "Features"; two instructions issue together), one
MAC pipeline (one multiply or multiply-accumulate a cycle), a load/store unit with a 64-bit data
path (one load or store instruction a cycle, LDRD and two registers of an LDM a cycle), branch
prediction with a branch target address cache (predicted branches cost no refill), the L1 data
cache (4-way, 32-byte lines; 16 KB on the STM32F767, 4 KB on the STM32F746, RM0410 / RM0385
"Cortex-M7 with FPU" feature list) which the TCM bypasses. So an operator costs
    max(instructions / 2 (+ the unpaired classes), load/store instructions, multiplies)
    + taken transfers x 1 + flash lines filled x (wait states + 1)
The flash is read 256 bits (one 32-byte cache line) an access (RM0410, embedded flash "main
features"; not re-read here), and
data reads from 0x0800 0000 go over the AXI bus through the L1 data cache, not through the ART
accelerator (which serves the ITCM interface). Its known errors, all optimistic but the last:
no data dependency stalls (a load's result is ready two cycles later, a MAC's accumulator one: a
kernel that uses a loaded value at once stalls), dual-issue restrictions beyond the three
resource bounds (only one shifted operand a cycle; DSP instructions pair only as the first of a
pair), branch mispredictions (the loop exits: several cycles each), instruction cache misses,
misses of the SRAM behind the cache, the AXI and bus matrix latency of a line fill, and stores
(write-through or write-back, never modelled); and the taken transfer's cycle may be too much
when the branch target address cache folds it. No Cortex-M7 measurement of a known build exists
here to check it: benchmarks/cycle_mix.py compares it with the fastest published results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcugen.boards import Board
from mcugen.errors import McugenError
from mcugen.link.instruction_mix import CLASS_NAMES, M4_CYCLES, Mix

M7_TRM = "Cortex-M7 TRM r1p2 (ARM DDI 0489F)"
#: Cortex-M7 issue cost per class, in cycles (0.5: it dual-issues with a neighbour).
M7_CYCLES: dict[str, tuple[float, str]] = {
    "alu": (0.5, f"{M7_TRM} 1.2: dual issue, two instructions a cycle (assumed always paired)"),
    "mul": (0.5, f"{M7_TRM} 1.2: one MAC pipeline; pairs with a load or ALU instruction"),
    "mac": (0.5, f"{M7_TRM} 1.2: one MAC pipeline; pairs with a load or ALU instruction"),
    "div": (7, f"{M7_TRM}: SDIV, UDIV iterate (as the M4's 2-12, middle: 7; assumed)"),
    "load": (0.5, f"{M7_TRM} 1.2: load/store unit, pairs with an ALU or MAC instruction"),
    "piped": (0, "Cortex-M7: no M4-style load pipelining term (dual issue covers it)"),
    "load2": (1, f"{M7_TRM} 1.2: 64-bit load path, LDRD in one cycle"),
    "loadm": (2, f"{M7_TRM} 1.2: 64-bit load path, two registers a cycle (N taken as 4)"),
    "store": (0.5, f"{M7_TRM} 1.2: load/store unit, pairs with an ALU or MAC instruction"),
    "store2": (1, f"{M7_TRM} 1.2: 64-bit store path, STRD in one cycle"),
    "storem": (2, f"{M7_TRM} 1.2: 64-bit store path, two registers a cycle (N taken as 4)"),
    "branch": (0.5, f"{M7_TRM} 1.2: branches dual-issue (one a cycle)"),
    "it": (0.5, f"{M7_TRM} 1.2: dual issue (IT taken as paired)"),
    "fp": (0.5, f"{M7_TRM} 1.2: the FPU pipeline dual-issues with integer instructions"),
    "other": (1, f"{M7_TRM}: barriers, system instructions: not paired"),
    "taken": (1, f"{M7_TRM} 1.2: BTAC branch prediction; a taken transfer taken as 1 bubble"),
}


@dataclass(frozen=True)
class BoardCycles:
    """A board's facts the cycle models need ([cycles] in board.toml, each with its source)."""

    board: str
    core: str
    clock_hz: int
    flash_wait_states: int
    flash_wait_states_source: str
    #: the L1 data cache: (sets, ways, line bytes), None when the core has none
    dcache: tuple[int, int, int] | None = None
    dcache_source: str = ""


@dataclass(frozen=True)
class CycleModel:
    """A core's cost model: its class costs (with sources) and how an operator's mix becomes
    cycles."""

    name: str
    method: str
    costs: dict[str, tuple[float, str]]
    cycles: Callable[[Mix, BoardCycles], float]


def _m4_cycles(mix: Mix, board: BoardCycles) -> float:
    return mix.m4_cycles(board.flash_wait_states)


def _m7_cycles(mix: Mix, board: BoardCycles) -> float:
    c = mix.counts
    slots = sum(c[k] * M7_CYCLES[k][0] for k in CLASS_NAMES)
    load_store = c["load"] + c["store"] + c["load2"] + c["store2"] + 2 * (c["loadm"] + c["storem"])
    issue = max(slots, load_store, c["mac"] + c["mul"])
    return (
        issue
        + c["taken"] * M7_CYCLES["taken"][0]
        + c["flash_fills"] * (board.flash_wait_states + 1)
    )


CORTEX_M4 = CycleModel(
    "cortex-m4",
    "instruction mix on the twin x Cortex-M4 TRM cycles per class + flash wait states",
    {**M4_CYCLES, "flash_loads": (0.5, "flash wait states / 2 per data load from flash")},
    _m4_cycles,
)
CORTEX_M7 = CycleModel(
    "cortex-m7",
    "instruction mix on the twin x Cortex-M7 dual-issue bounds + modelled D-cache fills x "
    "(flash wait states + 1)",
    {
        **M7_CYCLES,
        "flash_fills": (
            1,
            "RM0410 embedded flash: one 256-bit read a 32-byte line, wait states + 1",
        ),
    },
    _m7_cycles,
)
#: the cycle models by core (`Board.core`)
MODELS: dict[str, CycleModel] = {m.name: m for m in (CORTEX_M4, CORTEX_M7)}


def board_cycles(board: Board) -> BoardCycles:
    """The board's [cycles] table; one error line when the board or its core has none."""
    if board.core not in MODELS:
        raise McugenError(
            f"no instruction-mix cycle model for {board.core}",
            where=board.name,
            hint=f"--estimate mix knows {', '.join(MODELS)} (mcugen/link/cycle_models.py)",
        )
    table: dict[str, Any] | None = board.extra.get("cycles")
    if not table or "flash_wait_states" not in table or "flash_wait_states_source" not in table:
        raise McugenError(
            "board.toml has no [cycles] flash_wait_states (with its _source)",
            where=board.name,
            hint="--estimate mix needs the board's flash wait states at its clock",
        )
    dcache = table.get("dcache")
    return BoardCycles(
        board=board.name,
        core=board.core,
        clock_hz=board.clock_hz,
        flash_wait_states=int(table["flash_wait_states"]),
        flash_wait_states_source=str(table["flash_wait_states_source"]),
        dcache=(int(dcache[0]), int(dcache[1]), int(dcache[2])) if dcache else None,
        dcache_source=str(table.get("dcache_source", "")),
    )


def operator_cycles(mixes: list[Mix], board: BoardCycles) -> list[float]:
    """Each operator's estimated cycles on `board` (the inference's estimate is their sum)."""
    model = MODELS[board.core]
    return [model.cycles(m, board) for m in mixes]
