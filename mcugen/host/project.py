"""Write a self-contained firmware project (generated model + runtime + board) and compile it.

Host projects are a process that reads inputs from a file; Cortex-M projects are firmware that
speaks the device protocol (runtime_c/app) over the board's console, with a generated linker script
holding the board's memory limits, a Makefile for arm-none-eabi-gcc and a platformio.ini.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcugen import __version__, progress
from mcugen.boards import CONSOLE_BAUD, Memory, Target
from mcugen.codegen.render import environment
from mcugen.codegen.viewmodel import SLOW_SECTION
from mcugen.errors import BuildError
from mcugen.host.sizes import FirmwareSizes, firmware_sizes
from mcugen.model.ir import Graph
from mcugen.outputs import staged_directory, write_tree
from mcugen.pipeline import Generated
from mcugen.plan import dynamic
from mcugen.plan.fit import Fit, fit_of
from mcugen.plan.memory_plan import MemoryPlan
from mcugen.plan.target import memory_target
from mcugen.resources import boards_dir, runtime_dir

HOST_TARGET = "model"
ELF_TARGET = "model.elf"
#: The dynamic allocators' C source (runtime_c/src), compiled only into dynamic builds.
DYNAMIC_ALLOCATOR_SOURCE = "allocator.c"
#: Defined for static builds: the runtime drops its allocator hooks (runtime.h).
STATIC_OFFSETS_DEFINE = "MCU_STATIC_OFFSETS"
#: Defined for paged builds: offsets beyond the arena address the slow memory (runtime.h).
PAGED_DEFINE = "MCU_PAGED"
#: Defined when the weights live in external flash (runtime.h MCU_WEIGHTS).
WEIGHTS_EXTERNAL_DEFINE = "MCU_WEIGHTS_EXTERNAL"
#: Defined for MLPerf Tiny energy-mode firmware (app/mlperf.c, mcu/port.h's timestamp pin), with
#: the console at the energy mode's baud rate.
ENERGY_DEFINES = ("MCU_MLPERF_ENERGY", f"MCU_CONSOLE_BAUD={CONSOLE_BAUD['energy']}u")


@dataclass(frozen=True)
class BuildResult:
    directory: Path
    executable: Path
    compile_seconds: float
    files: tuple[str, ...]


def executable_name(target: Target) -> str:
    return HOST_TARGET if target.board.is_host else ELF_TARGET


def _runtime_files(gen: Generated) -> tuple[dict[str, bytes], list[str]]:
    files: dict[str, bytes] = {}
    rt = runtime_dir()
    vm = gen.view_model
    for header in sorted((rt / "include").rglob("*.h")):
        rel = header.relative_to(rt / "include")
        kernel_header = rel.parts[:2] == ("mcu", "kernels")
        if kernel_header and rel.stem not in vm.kernels and rel.as_posix() not in vm.headers:
            continue
        files[f"runtime/include/{rel.as_posix()}"] = header.read_bytes()
    sources = []
    for src in sorted((rt / "src").glob("*.c")):
        if src.name == DYNAMIC_ALLOCATOR_SOURCE and gen.dynamic is None:
            continue  # static offsets: the model has no allocator hook, nothing to link
        files[f"runtime/src/{src.name}"] = src.read_bytes()
        sources.append(f"runtime/src/{src.name}")
    for kernel_file in gen.view_model.kernel_sources:
        files[f"runtime/kernels/{kernel_file}"] = (rt / "kernels" / kernel_file).read_bytes()
        sources.append(f"runtime/kernels/{kernel_file}")
    return files, sources


def project_files(gen: Generated, target: Target) -> dict[str, bytes]:
    """Every file of the project by relative path. Reads the runtime and board, writes nothing."""
    files: dict[str, bytes] = {k: v.encode() for k, v in gen.files.items()}
    runtime, sources = _runtime_files(gen)
    files.update(runtime)
    sources = ["model.c", "model_data.c", *sources]
    env = environment()
    board = target.port_board
    defines = [STATIC_OFFSETS_DEFINE] if gen.dynamic is None else []
    if gen.dynamic is not None and gen.dynamic.mode == dynamic.PAGED:
        defines = [PAGED_DEFINE]
    if not target.board.is_host and weights_memory(model_weights(gen), target) is not None:
        defines.append(WEIGHTS_EXTERNAL_DEFINE)
    if target.mlperf_mode == "energy":
        defines += ENERGY_DEFINES
    if target.multiboard:
        defines.append("MCU_MULTIBOARD=1")
    if target.links:
        defines.append(f"MCU_LINKS={target.links}")
    if target.board.is_host:
        files["main.c"] = (board.directory / "main.c").read_bytes()
        sources.append("main.c")
        makefile = env.get_template("Makefile.j2").render(
            version=__version__, board=board, sources=sources, target=HOST_TARGET, defines=defines
        )
        files["Makefile"] = makefile.encode()
        return files
    for app in sorted((runtime_dir() / "app").glob("*")):
        files[f"app/{app.name}"] = app.read_bytes()
        if app.suffix == ".c":
            sources.append(f"app/{app.name}")
    for src in [boards_dir() / "common" / "startup_cortex_m.c", *board.port_sources()]:
        files[f"board/{src.name}"] = src.read_bytes()
        sources.append(f"board/{src.name}")
    context = dict(
        version=__version__,
        board=board,
        target=target,
        sources=sources,
        defines=defines,
        flash=target.flash,
        ram=target.ram,
        emulate=target.emulate,
        stack_bytes=target.board.stack_bytes,
        elf=ELF_TARGET,
        baud=CONSOLE_BAUD[target.mlperf_mode],
        **link_regions(gen, target),
    )
    files["link.ld"] = env.get_template("link.ld.j2").render(**context).encode()
    files["Makefile"] = env.get_template("Makefile.arm.j2").render(**context).encode()
    if not target.emulate:
        files["platformio.ini"] = env.get_template("platformio.ini.j2").render(**context).encode()
    return files


#: Flash left to code and tables when weights move to external flash: they go there when they
#: would leave less than this much of the internal flash.
CODE_ROOM = 128 * 1024
#: Memories the weights may live in besides the internal flash.
WEIGHT_KINDS = ("QSPI",)


def weights_memory(weights: int, target: Target) -> Memory | None:
    """The memory-mapped external flash that holds the weights when they leave less than
    `CODE_ROOM` of the internal flash (the largest such memory that holds them), else None."""
    flash = target.board.flash or target.flash  # the board's own (a measuring link widens it)
    if weights + CODE_ROOM <= flash.size:
        return None
    found = [
        m for m in target.memories if m.kind in WEIGHT_KINDS and m.mapped and m.size >= weights
    ]
    return max(found, key=lambda m: (m.size, m.name)) if found else None


def model_weights(gen: Generated) -> int:
    return sum(len(c.data) for c in gen.view_model.constants)


def link_regions(gen: Generated, target: Target) -> dict[str, Any]:
    """What link.ld.j2 needs for the arena's pools: one region per pool's memory at the target's
    origins (the twin's when emulating), and the region of the firmware's own RAM (the memory
    pool assignment reserved it in); one RAM region as before for one arena. With paging to an
    external memory, its region and section (`slow`)."""
    slow = None
    paging = gen.plan.paging
    used = [paging.slow.name] if paging is not None and paging.slow.external else []
    if paging is None or not paging.slow_bytes:
        used = []
    used += [gen.plan.persistent.memory] if gen.plan.persistent.memory else []
    if used:
        assert len(set(used)) == 1, f"one slow memory per build, not {used}"
        memory = next(m for m in target.memories if m.name == used[0])
        slow = {"name": memory.name, "origin": memory.origin, "size": memory.size}
        slow["section"] = SLOW_SECTION
    external = weights_memory(model_weights(gen), target)
    weights = (
        {"name": external.name, "origin": external.origin, "size": external.size}
        if external is not None
        else None
    )
    pools = gen.view_model.pools
    if not pools:
        return {"regions": [], "ram_region": "RAM", "slow": slow, "weights": weights}
    memories = {m.name: m for m in target.memories}
    regions = [
        {
            "name": p.name,
            "region": p.name.upper(),
            "origin": memories[p.name].origin,
            "size": memories[p.name].size,
            "section": p.section,
        }
        for p in pools
    ]
    ram = next((p.name for p in pools if p.firmware), pools[-1].name)
    return {"regions": regions, "ram_region": ram.upper(), "slow": slow, "weights": weights}


def state_hint(target: Target, plan: MemoryPlan) -> str:
    """What to do with a state that makes the RAM overflow, given the target's memories."""
    slow = memory_target(target).state_memory()
    if slow is None:
        return (
            f"{target.board.name} has no external RAM to hold the state (a board with SDRAM "
            "can: --board disco-f746ng)"
        )
    if plan.persistent.in_ram:
        return f"--state-memory auto or slow puts it in {slow.name}"
    return ""


def check_fits(gen: Generated, target: Target) -> None:
    """Fail before compiling when the plan does not fit the board (`plan.fit.fit_of`), or needs
    a memory the board's port does not set up yet (`Fit.not_ready`)."""
    if target.board.is_host:
        return
    allocator = gen.dynamic.mode if gen.dynamic is not None else dynamic.STATIC
    problem = target_fit(gen.graph, gen.plan, allocator, model_weights(gen), target).problem()
    if problem is not None:
        raise problem


def external_memories(plan: MemoryPlan, weights: int, target: Target) -> list[str]:
    """The memories outside the internal flash and RAM that a build of `plan` with `weights`
    bytes of constants uses on `target`."""
    used = []
    external = weights_memory(weights, target)
    if external is not None:
        used.append(external.name)
    paging = plan.paging
    if paging is not None and paging.slow.external and paging.slow_bytes:
        used.append(paging.slow.name)
    state = plan.persistent.memory
    if state and state not in used:
        used.append(state)
    return used


def target_fit(graph: Graph, plan: MemoryPlan, allocator: str, weights: int, target: Target) -> Fit:
    """`plan.fit.fit_of` on `target`, weights in external flash when they go there. The verdict
    names what it is for: the board itself, or its QEMU twin (`Fit.twin`); on the board, a
    memory its port does not set up yet is a reason it does not fit (`Fit.not_ready`)."""
    fit = replace(
        fit_of(graph, plan, allocator, weights, memory_target(target)),
        state_hint=state_hint(target, plan),
        twin=target.port_board.name if target.emulate and target.port_board != target.board else "",
    )
    if not target.emulate:
        by_name = {m.name: m for m in target.memories}
        waiting = [
            f"{name} ({by_name[name].kind})"
            for name in external_memories(plan, weights, target)
            if name in by_name and not by_name[name].port_ready
        ]
        if waiting:
            fit = replace(fit, not_ready=", ".join(waiting))
    external = weights_memory(weights, target)
    if external is None:
        return fit
    return replace(fit, weights=0, external_weights=weights, external_memory=external.name)


#: Region size when linking only to measure: large enough for any model, small enough that
#: flash below RAM never reaches it.
_MEASURE_REGION = 0x0800_0000


def linked_sizes(gen: Generated, target: Target) -> FirmwareSizes:
    """Flash and RAM of the firmware `build` would link for `gen` on `target`, measured by
    compiling and linking it in a scratch directory with both memory regions widened, so that a
    firmware too large for the board still links and says by how much (`mcugen plan --board`).
    The sections hold the same bytes as in the real link: only the regions' lengths differ."""
    flash = target.flash
    room = flash.origin < target.ram.origin and target.ram.origin - flash.origin
    wide = replace(
        target,
        flash=replace(flash, size=min(room or _MEASURE_REGION, _MEASURE_REGION)),
        ram=replace(target.ram, size=_MEASURE_REGION),
    )
    with tempfile.TemporaryDirectory(prefix="mcugen-measure-") as tmp:
        write_tree(project_files(gen, wide), Path(tmp))
        compile_project(Path(tmp), wide)
        return firmware_sizes(Path(tmp) / ELF_TARGET, target)


def compile_project(directory: Path, target: Target, *, jobs: int = 2) -> float:
    cc = target.port_board.cc
    if shutil.which(cc) is None:
        raise BuildError(
            f"compiler '{cc}' not found",
            where=f"board {target.board.name}",
            hint="run scripts/install.sh (or apt-get install gcc-arm-none-eabi)",
        )
    start = time.perf_counter()
    cmd = ["make", "-s", f"-j{jobs}", "-C", str(directory)]
    launcher = os.environ.get("MCUGEN_CC_LAUNCHER", "").strip()
    if launcher:  # a compiler cache such as ccache: the same objects, built once
        if shutil.which(launcher.split()[0]) is None:
            raise BuildError(
                f"compiler launcher '{launcher}' not found",
                where="environment variable MCUGEN_CC_LAUNCHER",
                hint="install it (apt-get install ccache) or unset MCUGEN_CC_LAUNCHER",
            )
        cmd.append(f"CC={launcher} {cc}")
    with progress.step(f"compiling for {target.label}"):
        returncode, stderr = _run_make(cmd, directory)
    seconds = time.perf_counter() - start
    if returncode != 0:
        raise _compile_error(stderr, target)
    return seconds


def _run_make(cmd: list[str], directory: Path) -> tuple[int, str]:
    """Run `cmd` (make and the compilers under it) in a process group of its own, with the
    compilers' temporary files in `directory` (TMPDIR): on Ctrl-C or any other exception the
    whole group is stopped and waited for, so no compiler goes on writing, and whatever it left
    goes with `directory`. (return code, stderr)"""
    scratch = directory / ".cc-tmp"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate()
    except BaseException:
        _stop_group(proc)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return proc.returncode, stderr


def _stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM to the process group, then SIGKILL if it is still there after a second."""
    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _compile_error(stderr: str, target: Target) -> BuildError:
    for line in stderr.splitlines():
        if "overflowed by" in line:
            detail = line.split(":")[-1].strip()
            return BuildError(
                f"firmware does not fit {target.board.name}: {detail}",
                hint="see `mcugen build` sizes; reduce the arena or the weights",
            )
    first = next((ln for ln in stderr.splitlines() if "error" in ln), stderr[-300:])
    return BuildError(
        f"compiling the generated project failed: {first.strip()}",
        hint="this is a bug in mcugen; please report it with the model",
    )


def build(gen: Generated, target: Target, out_dir: Path) -> BuildResult:
    """Write and compile in a staging directory, then move it to `out_dir` in one rename.

    A failure at any point leaves `out_dir` as it was (absent, or the previous build).
    """
    check_fits(gen, target)
    files = project_files(gen, target)
    with staged_directory(out_dir) as staging:
        write_tree(files, staging)
        seconds = compile_project(staging, target)
    out_dir = out_dir.resolve()
    exe = out_dir / executable_name(target)
    return BuildResult(out_dir, exe, seconds, tuple(sorted(files)))
