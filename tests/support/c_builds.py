"""Host C drivers under the sanitizers (tests/c/) and library exports built by every
compiler (mcugen export)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mcugen.options import PlanOptions
from mcugen.pipeline import Generated
from support.paths import ROOT

# --- Host C drivers (tests/c/) -----------------------------------------------------------------

#: Host C test drivers: strict warnings, AddressSanitizer and UBSan, stop at the first report.
SANITIZED_FLAGS = [
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-g",
]


def build_allocator_driver(driver_source: str, exe: Path, helpers: Sequence[str] = ()) -> Path:
    """Compile tests/c/`driver_source` and tests/c/`helpers` with runtime_c/src/allocator.c under
    the sanitizers; skips the test when the machine has no gcc."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    drivers = [ROOT / "tests/c" / name for name in (driver_source, *helpers)]
    sources = [*drivers, ROOT / "runtime_c/src/allocator.c"]
    include = f"-I{ROOT / 'runtime_c/include'}"
    cmd = ["gcc", *SANITIZED_FLAGS, include, *map(str, sources), "-o", str(exe)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe


# --- Library exports (mcugen export: tests/c/test_export_c.py, tests/qemu/test_export_app.py) --

#: Flags every compiler builds an export with: the issue's strictest set.
STRICT_C = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wpedantic"]
STRICT_C += ["-ffunction-sections", "-fdata-sections"]
#: The twin's core (nucleo-f767 and mps2-an500).
CORTEX_M7 = ["-mcpu=cortex-m7", "-mfpu=fpv5-d16", "-mfloat-abi=hard", "-mthumb"]


def export_library(
    model: Path, name: str, out: Path, *, fmt: str = "lib", core: str = "host", **options: Any
) -> Generated:
    """`mcugen export` of `model` as library `name` into `out` (through the Python API)."""
    from mcugen.firmware.export import export_files
    from mcugen.outputs import write_tree
    from mcugen.pipeline import generate_from_file

    gen = generate_from_file(model, PlanOptions(core=core, **options))
    files = export_files(gen, name, fmt=fmt, core=core)
    write_tree({k: v.encode() for k, v in files.items()}, out)
    return gen


def compile_library(lib: Path, cc: Sequence[str], objects: Path) -> list[Path]:
    """Every C file of an exported library compiled with `cc` and STRICT_C; the object files."""
    objects.mkdir(parents=True, exist_ok=True)
    found = []
    for src in sorted((lib / "src").glob("*.c")):
        obj = objects / f"{src.stem}.o"
        flags = list(STRICT_C)
        if src.name.endswith("_model_data.c"):  # const weight tables: -O0, as the firmware builds
            flags[flags.index("-O2")] = "-O0"  # them (optimising megabytes of arrays takes long)
        cmd = [*cc, *flags, f"-I{lib / 'include'}", f"-I{lib / 'src'}", "-c", str(src)]
        proc = subprocess.run([*cmd, "-o", str(obj)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{' '.join(cc)} {src.name}:\n{proc.stderr[-2000:]}"
        found.append(obj)
    return found
