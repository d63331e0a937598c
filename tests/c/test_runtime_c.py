"""The C runtime's build configurations (runtime_c/include/mcu/runtime.h).

Every runtime and kernel source compiles warning-free with and without MCU_CHECK_MODEL (the
kernels' re-checks of what the build validated) and MCU_STATIC_OFFSETS (no allocator hooks), and a
static build links no dynamic-allocator code: not on the host, not in the Cortex-M firmware (when
arm-none-eabi-gcc is installed). A dynamic build links it and still matches TFLM.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan.dynamic import Allocator
from support import EXAMPLE, ROOT, assert_matches_tflm

RUNTIME = ROOT / "runtime_c"
STRICT = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
CONFIGS = {
    "firmware static": ["-DMCU_STATIC_OFFSETS"],
    "firmware dynamic": [],
    "host static": ["-DMCU_CHECK_MODEL", "-DMCU_STATIC_OFFSETS"],
    "host dynamic": ["-DMCU_CHECK_MODEL"],
}


def sources() -> list[Path]:
    return sorted([*(RUNTIME / "src").glob("*.c"), *(RUNTIME / "kernels").rglob("*.c")])


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_runtime_compiles_in_every_configuration(config: str, tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    include = f"-I{RUNTIME / 'include'}"
    cmd = ["gcc", *STRICT, *CONFIGS[config], include, "-c", *map(str, sources())]
    run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(list(tmp_path.glob("*.o"))) == len(sources())


def defined_symbols(nm: str, executable: Path) -> list[str]:
    out = subprocess.run([nm, "--defined-only", str(executable)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]


def allocator_symbols(symbols: list[str]) -> list[str]:
    return [s for s in symbols if s.startswith("mcu_dyn_")]


@pytest.fixture(scope="module")
def example_static() -> Generated:
    return generate(load_model(EXAMPLE), options=PlanOptions(allocator=Allocator.STATIC))


@pytest.fixture(scope="module")
def example_compacting() -> Generated:
    return generate(load_model(EXAMPLE), options=PlanOptions(allocator=Allocator.COMPACTING))


def host_build(gen: Generated, directory: Path) -> Path:
    if shutil.which("gcc") is None or shutil.which("nm") is None:
        pytest.skip("gcc or nm not installed")
    return build(gen, resolve_target(load_board("host"), emulate=False), directory).executable


def test_static_host_build_links_no_allocator(example_static: Generated, tmp_path: Path) -> None:
    exe = host_build(example_static, tmp_path / "static")
    assert not (tmp_path / "static" / "runtime" / "src" / "allocator.c").exists()
    assert "MCU_STATIC_OFFSETS" in (tmp_path / "static" / "Makefile").read_text()
    symbols = defined_symbols("nm", exe)
    assert "mcu_invoke" in symbols
    assert allocator_symbols(symbols) == []


def test_dynamic_host_build_links_the_allocator(
    example_compacting: Generated, tmp_path: Path
) -> None:
    exe = host_build(example_compacting, tmp_path / "dynamic")
    assert "MCU_STATIC_OFFSETS" not in (tmp_path / "dynamic" / "Makefile").read_text()
    assert {"mcu_dyn_before", "mcu_dyn_after", "mcu_dyn_reset", "mcu_dyn_allocator"} <= set(
        allocator_symbols(defined_symbols("nm", exe))
    )


def test_dynamic_build_matches_tflm_through_the_hook() -> None:
    def compacting(graph: Graph) -> Generated:
        return generate(graph, options=PlanOptions(allocator=Allocator.COMPACTING))

    assert_matches_tflm(EXAMPLE.read_bytes(), samples=2, generate_fn=compacting)


def test_static_firmware_links_no_allocator(example_static: Generated, tmp_path: Path) -> None:
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    if shutil.which(target.port_board.cc) is None:
        pytest.skip("arm-none-eabi-gcc not installed")
    elf = build(example_static, target, tmp_path / "fw").executable
    symbols = defined_symbols("arm-none-eabi-nm", elf)
    assert "mcu_invoke" in symbols
    assert allocator_symbols(symbols) == []
