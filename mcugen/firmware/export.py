"""A generated model as a C library for the user's own firmware (`mcugen export`).

The export is the generated model, the runtime's interpreter and only the kernels the model uses,
behind one standalone header, `include/<name>.h` (stdint.h only). Two exports must link into one
program, so every symbol they define is under `<name>_`. How: every C file of the export begins
with `#include "<name>_build.h"`, a generated header of `#define mcu_x <name>_mcu_x` for each
`mcu_` identifier the export's sources use (and each constant array), so the runtime and kernels
compile unchanged, renamed per translation unit. Unlike an amalgamation of static functions, it
keeps one file per kernel (readable, diagnostics on the right file and line through `#line`, the
linker's section garbage collection per function) and needs no compile flags, which Arduino and
PlatformIO libraries cannot pass. Renaming types and static names too is harmless (a macro is
the same in every translation unit) and makes the list complete by construction; the tests check
with `nm` that nothing defined escapes the prefix.

Pure: `export_files` returns {relative path: text}; only the command writes them.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, replace

from mcugen import __version__
from mcugen.codegen.render import c_string, environment, render_model
from mcugen.codegen.vm_types import C_TYPES, MAX_DIMS
from mcugen.errors import McugenError
from mcugen.pipeline import Generated
from mcugen.plan import dynamic
from mcugen.plan.ram_use import room
from mcugen.resources import runtime_dir

#: Package layouts `--format` writes around the library (`lib`: the library alone).
FORMATS = ("lib", "cmake", "platformio", "zephyr", "arduino")
#: Defined for builds without a dynamic allocator / with paging (runtime.h; firmware/project.py).
STATIC_DEFINE = "MCU_STATIC_OFFSETS"
PAGED_DEFINE = "MCU_PAGED"
#: Runtime sources besides the kernels: the interpreter, and the allocator in dynamic builds.
INTERPRETER = "interpreter.c"
ALLOCATOR = "allocator.c"
_IDENT = re.compile(r"\bmcu_[A-Za-z0-9_]*")
_INCLUDE = re.compile(r'#include "(mcu/[A-Za-z0-9_/]+\.h)"')
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
_C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double"}
_C_KEYWORDS |= {"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long"}
_C_KEYWORDS |= {"register", "restrict", "return", "short", "signed", "sizeof", "static"}
_C_KEYWORDS |= {"struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while"}


def check_name(name: str) -> str:
    """`name` if it can prefix C symbols: lowercase, a letter first, at most 32 characters, not a
    C keyword and not `mcu` (the runtime's own prefix, which the export renames)."""
    bad = not _NAME.fullmatch(name) or name in _C_KEYWORDS or keyword.iskeyword(name)
    if bad or name == "mcu" or name.startswith("mcu_") or name.endswith("_"):
        raise McugenError(
            f"bad library name {name!r}",
            hint="use --name with a C identifier: lowercase letters, digits and _, a letter "
            "first, at most 32 characters, not a C keyword, not mcu or mcu_*",
        )
    return name


def default_name(stem: str) -> str:
    """The library name of a model file's stem: lowercase, other characters as `_`."""
    name = re.sub(r"[^a-z0-9_]+", "_", stem.lower()).strip("_")
    return name if name[:1].isalpha() else f"m_{name}"


@dataclass(frozen=True)
class TensorInfoVM:
    """An input or output as the API describes it (`<name>_tensor_info_t`)."""

    name: str
    type_enum: str  # e.g. INT8, prefixed in the header
    ctype: str
    dims: tuple[int, ...]
    nbytes: int
    scale: float
    zero_point: int


@dataclass(frozen=True)
class SourceVM:
    path: str  # in the export, e.g. src/kws_k_conv_2d_s8.c
    origin: str  # where it comes from, for #line and the banner
    text: str


@dataclass(frozen=True)
class ExportVM:
    name: str
    upper: str
    version: str
    model_sha256: str
    model_name: str
    arena_bytes: int
    arena_section: str  # "" for .bss
    allocator: str
    core: str
    defines: tuple[str, ...]
    renames: tuple[str, ...]  # identifiers the build header prefixes
    inputs: tuple[TensorInfoVM, ...]
    outputs: tuple[TensorInfoVM, ...]
    operators: tuple[str, ...]  # opcode per position
    has_state: bool
    types: tuple[str, ...]
    max_dims: int
    sources: tuple[str, ...]  # every .c of the export, relative to its root
    formats: tuple[str, ...] = ("lib",)


def _tensor_info(gen: Generated, index: int) -> TensorInfoVM:
    t = gen.graph.tensors[index]
    q = t.quant
    scale, zp = (q.scale, q.zero_points[0]) if q is not None and not q.per_channel else (0.0, 0)
    ctype = {"float32": "float", "bool": "uint8_t"}.get(t.dtype, f"{t.dtype}_t")
    return TensorInfoVM(c_string(t.name), t.dtype.upper(), ctype, t.shape, t.nbytes, scale, zp)


def _runtime_texts(gen: Generated) -> tuple[list[SourceVM], dict[str, str]]:
    """The runtime's C sources this model needs, and every header they include (transitively)."""
    rt = runtime_dir()
    sources = [SourceVM("", f"runtime_c/src/{INTERPRETER}", (rt / "src" / INTERPRETER).read_text())]
    if gen.dynamic is not None:
        text = (rt / "src" / ALLOCATOR).read_text()
        sources.append(SourceVM("", f"runtime_c/src/{ALLOCATOR}", text))
    for rel in gen.view_model.kernel_sources:
        sources.append(SourceVM("", f"runtime_c/kernels/{rel}", (rt / "kernels" / rel).read_text()))
    headers: dict[str, str] = {}
    pending = [inc for s in sources for inc in _INCLUDE.findall(s.text)]
    pending += list(gen.view_model.headers) + ["mcu/runtime.h"]
    while pending:
        rel = pending.pop()
        if rel not in headers:
            headers[rel] = (rt / "include" / rel).read_text()
            pending += _INCLUDE.findall(headers[rel])
    return sources, headers


def export_view_model(
    gen: Generated, name: str, *, core: str, arena_section: str = "", formats: tuple[str, ...]
) -> tuple[ExportVM, dict[str, str]]:
    """The export's view-model and its files other than the templates' own: the copied runtime
    headers, and the generated model and runtime sources to wrap (`export_source.c.j2`)."""
    model_vm = replace(gen.view_model, header=f"{name}_model.h", own_arena=False)
    model = render_model(model_vm)
    runtime, headers = _runtime_texts(gen)
    wrapped = [
        SourceVM(f"src/{name}_model.c", "generated model tables", model["model.c"]),
        SourceVM(f"src/{name}_model_data.c", "generated model weights", model["model_data.c"]),
    ]
    for s in runtime:
        stem = s.origin.rsplit("/", 1)[1]
        prefix = "" if s.origin.startswith("runtime_c/src/") else "k_"
        wrapped.append(replace(s, path=f"src/{name}_{prefix}{stem}"))
    texts = [s.text for s in wrapped] + list(headers.values()) + [model["model.h"]]
    renames = sorted({m for t in texts for m in _IDENT.findall(t)})
    renames += sorted(c.symbol for c in model_vm.constants)
    defines = (STATIC_DEFINE,) if gen.dynamic is None else ()
    if gen.dynamic is not None and gen.dynamic.mode == dynamic.PAGED:
        defines = (PAGED_DEFINE,)
    nodes = model_vm.nodes
    vm = ExportVM(
        name=name,
        upper=name.upper(),
        version=__version__,
        model_sha256=model_vm.model_sha256,
        model_name=c_string(model_vm.model_name),
        arena_bytes=max(model_vm.arena_bytes, 16),
        arena_section=arena_section,
        allocator=gen.dynamic.mode if gen.dynamic is not None else dynamic.STATIC,
        core=core,
        defines=defines,
        renames=tuple(renames),
        inputs=tuple(_tensor_info(gen, t) for t in gen.graph.inputs),
        outputs=tuple(_tensor_info(gen, t) for t in gen.graph.outputs),
        operators=tuple(n.opcode for n in nodes),
        has_state=bool(model_vm.variables),
        types=tuple(k.upper() for k in C_TYPES),
        max_dims=MAX_DIMS,
        sources=tuple(sorted([f"src/{name}.c", f"src/{name}_arena.c"] + [s.path for s in wrapped])),
        formats=formats,
    )
    files = {f"src/{rel}": text for rel, text in headers.items()}
    files[f"src/{name}_model.h"] = model["model.h"]
    env = environment()
    source = env.get_template("export/source.c.j2")
    for s in wrapped:
        files[s.path] = source.render(e=vm, origin=s.origin, text=s.text)
    return vm, files


#: Template per file of the library, and per package format the files it adds.
_LIBRARY = {
    "include/{name}.h": "export/api.h.j2",
    "src/{name}.c": "export/api.c.j2",
    "src/{name}_arena.c": "export/arena.c.j2",
    "src/{name}_build.h": "export/build.h.j2",
}
_PACKAGES = {
    "lib": {},
    "cmake": {"CMakeLists.txt": "export/CMakeLists.txt.j2"},
    "platformio": {"library.json": "export/library.json.j2"},
    "zephyr": {
        "zephyr/module.yml": "export/module.yml.j2",
        "zephyr/CMakeLists.txt": "export/zephyr_CMakeLists.txt.j2",
        "zephyr/Kconfig": "export/Kconfig.j2",
    },
    "arduino": {"library.properties": "export/library.properties.j2"},
}


def export_files(
    gen: Generated, name: str, *, fmt: str = "lib", core: str = "host", arena_section: str = ""
) -> dict[str, str]:
    """Every file of the export of `gen` as library `name` in package format `fmt`."""
    if fmt not in FORMATS:
        raise McugenError(f"unknown format {fmt!r}", hint=f"choose one of {', '.join(FORMATS)}")
    vm, files = export_view_model(
        gen, check_name(name), core=core, arena_section=arena_section, formats=(fmt,)
    )
    env = environment()
    for path, template in {**_LIBRARY, **_PACKAGES[fmt]}.items():
        files[path.format(name=name)] = env.get_template(template).render(e=vm)
    if fmt == "arduino":  # Arduino compiles src/ only and takes the headers from there
        files[f"src/{name}.h"] = files.pop(f"include/{name}.h")
    return dict(sorted(files.items()))


@dataclass(frozen=True)
class LibraryFit:
    """The exported library against a board (`export --board`): what it puts in the RAM (its
    arena, the model state, paged buffers kept in an array in RAM) and in the flash (its
    weights), against the RAM the board's stack leaves and its flash. The user's firmware
    (its own RAM, code, and the library's code) comes on top: the verdict is necessary, not
    sufficient, and says so."""

    board: str
    arena: int
    state: int
    paged: int
    weights: int
    ram_room: int  # the board's RAM less its stack
    flash_size: int

    @property
    def ram(self) -> int:
        return self.arena + self.state + self.paged

    @property
    def fits(self) -> bool:
        return self.ram <= self.ram_room and self.weights <= self.flash_size

    def summary(self) -> str:
        parts = f"arena {self.arena:,}" + (f", model state {self.state:,}" if self.state else "")
        parts += f", paged buffers {self.paged:,}" if self.paged else ""
        verdict = "fits" if self.fits else "does NOT fit"
        return (
            f"{verdict} {self.board}: RAM {self.ram:,} of {self.ram_room:,} bytes ({parts}; the "
            f"board's RAM less its stack), {room(self.ram_room - self.ram)}; flash "
            f"{self.weights:,} of {self.flash_size:,} bytes (weights), "
            f"{room(self.flash_size - self.weights)}; your firmware's own RAM and code, and "
            "the library's code, come on top"
        )


def library_fit(gen: Generated, board: str, ram_size: int, stack: int, flash: int) -> LibraryFit:
    """`gen`'s library on a board of `ram_size` bytes of RAM (`stack` of it the stack) and
    `flash` bytes of flash."""
    paging = gen.plan.paging
    paged = paging.slow_bytes if paging is not None and not paging.slow.external else 0
    return LibraryFit(
        board,
        gen.view_model.arena_bytes,
        gen.plan.persistent.bytes,
        paged,
        sum(len(c.data) for c in gen.view_model.constants),
        ram_size - stack,
        flash,
    )
