"""The executed instruction mix of a firmware on its QEMU twin, per operator, and a cycle estimate
from it (issue 32 item 5).

Method. A QEMU TCG plugin (qemu_plugin/mix.c, built here with the host C compiler and cached)
classes every executed instruction by its mnemonic, counts data loads by memory region (flash,
on-chip SRAM and TCM, external memory: the board's memories where the twin holds them), passes
them through a model of the board's data cache when it has one, and counts taken control
transfers. It starts a new segment each time the runtime's clock
function (`mcu_port_cycles`) runs, which a profiled invoke calls between operators; the segments
are matched to the operators by the profile's own per-operator instruction counts.

Cycle models (cycle_models.py holds them, with the Cortex-M7's; this is the Cortex-M4's): each
class costs what the Cortex-M4 Technical Reference
Manual (ARM 100166_0001_00, section 3.3.1, Table 3-1, zero wait states) gives it, plus the
board's flash wait states on data loads from flash. Its known errors: a taken branch's pipeline
refill P is 1 to 3 cycles (taken as 2); IT instructions may fold into the previous instruction
(counted as 1); instruction fetches from flash are taken to hit the ART accelerator's cache (hot
kernel loops are small), data loads from flash to miss it with one flash line of 64 bits serving
two sequential words. Interrupts and bus contention are not modelled. No TFLM firmware can be
built on this machine (no network beyond package registries), so the model cannot be run on the
build the MLPerf Tiny reference runs measured (boards/nucleo-l4r5zi/board.toml [energy]); what
can be compared is cycles per twin instruction: the model gives 1.6-1.9 on mcugen's builds where
the reference runs measured 2.07-3.00 on TFLM + CMSIS-NN, 14-43 % less (docs/energy.md,
"Cycles from the instruction mix"; benchmarks/cycle_mix.py prints it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcugen.boards import Target
from mcugen.errors import BuildError, RunError
from mcugen.firmware.sizes import _run, _tool
from mcugen.link.device_run import BOOT_TIMEOUT_S, DeviceLink, _wait_for_banner, run_samples
from mcugen.link.qemu import qemu_console
from mcugen.model.ir import Graph

PLUGIN_SOURCE = Path(__file__).with_name("qemu_plugin") / "mix.c"
#: The plugin's classes, in its order (mix.c's enum), then its extra counters (mix.c's X_
#: enum): data loads (accesses: an LDM of four words counts four) from flash and from anywhere
#: else, taken control transfers, and of the other loads those from on-chip SRAM or TCM and from
#: external memory, then the flash lines the data cache model filled (0 without a cache model).
CLASS_NAMES = (
    "alu", "mul", "mac", "div", "load", "load2", "loadm", "store", "store2", "storem",
    "branch", "it", "fp", "other", "piped",
)  # fmt: skip
EXTRA = ("flash_loads", "other_loads", "taken", "sram_loads", "external_loads", "flash_fills")
#: the kinds of `mcugen.boards.MEMORY_KINDS` counted as on-chip SRAM, and as external memory
SRAM_KINDS = ("TCM", "SRAM")
EXTERNAL_KINDS = ("SDRAM", "PSRAM", "QSPI")
MARKER = "mcu_port_cycles"

#: Cortex-M4 cycles per class: (cycles, where the figure comes from).
M4_TRM = "Cortex-M4 TRM r0p1 (ARM 100166_0001_00) 3.3.1 Table 3-1"
M4_CYCLES: dict[str, tuple[float, str]] = {
    "alu": (1, f"{M4_TRM}: data processing, MOV, extend, SIMD add, saturate: 1"),
    "mul": (1, f"{M4_TRM}: MUL, SMULxy, SMULL, UMULL, SMMUL: 1"),
    "mac": (1, f"{M4_TRM}: MLA, SMLAxy, SMLAD, SMLAL, SMMLA: 1"),
    "div": (7, f"{M4_TRM}: SDIV, UDIV: 2-12 (middle: 7)"),
    "load": (2, f"{M4_TRM}: LDR, LDRB, LDRH, LDRSB, LDRSH: 2"),
    "piped": (-1, f"{M4_TRM} note: neighbouring single loads and stores pipeline to 1"),
    "load2": (3, f"{M4_TRM}: LDRD: 1 + N, N = 2"),
    "loadm": (5, f"{M4_TRM}: LDM, POP: 1 + N (N taken as 4)"),
    "store": (2, f"{M4_TRM}: STR, STRB, STRH: 2"),
    "store2": (3, f"{M4_TRM}: STRD: 1 + N, N = 2"),
    "storem": (5, f"{M4_TRM}: STM, PUSH: 1 + N (N taken as 4)"),
    "branch": (1, f"{M4_TRM}: B, BL, BX, CBZ: 1 (+ P when taken, below)"),
    "it": (1, f"{M4_TRM}: IT: 1 (0 when folded)"),
    "fp": (1, "Cortex-M4 TRM 7.2.3 FPU instruction set: VADD, VMUL, VMOV 1; VLDR 2 (taken as 1)"),
    "other": (1, f"{M4_TRM}: barriers, hints, MRS/MSR: 1 or more"),
    "taken": (2, f"{M4_TRM}: P, the pipeline refill of a taken branch: 1-3 (middle: 2)"),
}


@dataclass(frozen=True)
class Mix:
    """Executed instructions by class, loads by memory and taken control transfers."""

    counts: dict[str, int]

    @property
    def instructions(self) -> int:
        return sum(self.counts[c] for c in CLASS_NAMES if c != "piped")

    def loads_by_region(self) -> dict[str, int]:
        """Data load accesses by where they read: flash, on-chip SRAM (and TCM), external memory,
        and elsewhere (peripherals, memory the board does not list)."""
        c = self.counts
        sram, external = c.get("sram_loads", 0), c.get("external_loads", 0)  # a Mix of old counts
        return {
            "flash": c["flash_loads"],
            "sram": sram,
            "external": external,
            "other": c["other_loads"] - sram - external,
        }

    def m4_cycles(self, flash_wait_states: int) -> float:
        """The Cortex-M4 cycle estimate (the module's docstring says how, and its errors)."""
        cycles = sum(self.counts[c] * M4_CYCLES[c][0] for c in (*CLASS_NAMES, "taken"))
        return cycles + self.counts["flash_loads"] * flash_wait_states / 2

    def __add__(self, other: Mix) -> Mix:
        return Mix({k: self.counts[k] + other.counts[k] for k in self.counts})


def plugin_path() -> Path:
    """The plugin, compiled once per source version into the user's cache folder (atomically)
    with the host compiler ($CC, or cc)."""
    source = PLUGIN_SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mcugen"
    path = cache / f"qemu-mix-{digest}.so"
    if path.exists():
        return path
    compiler = os.environ.get("CC", "cc")
    hint = "a host C compiler (cc, or $CC) is needed: scripts/install.sh installs gcc"
    if shutil.which(compiler) is None:
        raise BuildError(
            f"the QEMU instruction-mix plugin needs a host C compiler: {compiler} not found",
            hint=hint,
        )
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        built = Path(tmp) / path.name
        cmd = [compiler, "-shared", "-fPIC", "-O2", "-o", str(built), str(PLUGIN_SOURCE)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise BuildError(f"building the QEMU instruction-mix plugin failed: {last}", hint=hint)
        built.replace(path)
    return path


def marker_address(elf: Path, target: Target) -> int:
    """Where the runtime's clock function starts (Thumb: the symbol's odd bit cleared)."""
    for line in _run([_tool(target, "nm"), "--defined-only", str(elf)]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == MARKER:
            return int(parts[0], 16) & ~1
    raise RunError(f"{elf.name} has no {MARKER}: the mix needs the runtime's clock function")


def plugin_memory_args(target: Target, dcache: tuple[int, int, int] | None) -> list[str]:
    """The plugin's memory arguments for `target` (where its twin holds each memory): flash, the
    SRAM and external ranges, and the data cache model (sets, ways, line bytes) with the ranges
    it caches: flash and the non-TCM memories (a TCM bypasses the Cortex-M7's L1 cache)."""

    def span(origin: int, size: int) -> str:
        return f"{origin:#x}-{origin + size:#x}"

    args = [f"flash={span(target.flash.origin, target.flash.size)}"]
    sram = [(target.ram.origin, target.ram.size)]
    sram += [(m.origin, m.size) for m in target.memories if m.kind in SRAM_KINDS]
    args += [f"sram={span(o, s)}" for o, s in dict.fromkeys(sram)]
    args += [f"ext={span(m.origin, m.size)}" for m in target.memories if m.kind in EXTERNAL_KINDS]
    if dcache is not None:
        args.append("dcache={}:{}:{}".format(*dcache))
        cached = [m for m in target.memories if m.kind not in ("TCM", "flash")]
        args += [f"cached={span(m.origin, m.size)}" for m in cached]
    return args


def measure_mix(
    target: Target,
    elf: Path,
    graph: Graph,
    sample: list[np.ndarray],
    workdir: Path,
    *,
    dcache: tuple[int, int, int] | None = None,
) -> tuple[list[Mix], list[int]]:
    """One profiled inference on the twin under the plugin: each operator's mix (in step order)
    and the profile's per-operator instruction counts it was matched to. `dcache`: the board's
    data cache (sets, ways, line bytes) to model, None for none."""
    out = workdir / "mix.txt"
    memory = ",".join(plugin_memory_args(target, dcache))
    plugin = f"{plugin_path()},marker={marker_address(elf, target):#x},{memory},out={out}"
    with qemu_console(target.machine, elf, extra=["-plugin", plugin], graceful=True) as ser:
        _wait_for_banner(ser, f"QEMU {target.machine}", BOOT_TIMEOUT_S)
        run = run_samples(
            DeviceLink(ser, name="twin"), graph, [sample], emulated=True, profile=True
        )
    if not out.exists():
        raise RunError("the QEMU plugin wrote no counts (QEMU did not exit cleanly)")
    segments = [
        Mix(dict(zip((*CLASS_NAMES, *EXTRA), map(int, line.split()), strict=True)))
        for line in out.read_text().splitlines()
    ]
    counts = [run.instructions(t) for t in run.node_ticks]
    return align(segments, counts), counts


def align(segments: list[Mix], counts: list[int]) -> list[Mix]:
    """The segments of the operators: a profiled invoke reads the clock before and after each
    operator, so operator k is segment j + 2k for some j (the clock function's own instructions
    make the totals differ from the counts by a few); j is the best match."""
    n = len(counts)
    if len(segments) < 2 * n:
        raise RunError(f"the plugin saw {len(segments)} segments for {n} operators")

    def error(j: int) -> int:
        return sum(abs(segments[j + 2 * k].instructions - c) for k, c in enumerate(counts))

    best = min(range(len(segments) - 2 * n + 2), key=error)
    return segments[best : best + 2 * n : 2]
