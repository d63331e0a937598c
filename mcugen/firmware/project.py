"""A self-contained firmware project's files: generated model + runtime + board, by path.

Host projects are a process that reads inputs from a file; Cortex-M projects are firmware that
speaks the device protocol (runtime_c/app) over the board's console, with a generated linker script
holding the board's memory limits, a Makefile for arm-none-eabi-gcc and a platformio.ini.
Compiling them is firmware/compile.py; whether they fit, firmware/fits.py.
"""

from __future__ import annotations

from typing import Any

from mcugen import __version__
from mcugen.boards import CONSOLE_BAUD, Memory, Target
from mcugen.codegen.render import environment
from mcugen.codegen.viewmodel import SLOW_SECTION
from mcugen.pipeline import Generated
from mcugen.plan import dynamic
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
