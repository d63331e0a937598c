"""`mcugen export` as C: the library compiles under strict flags with every compiler here, defines
no symbol outside its prefix, two exports link into one program and run bit-exact with TFLM, and
the CMake package builds (issue 18)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcugen.link.host_run import random_inputs
from support import (
    CORTEX_M7,
    EXAMPLE,
    ROOT,
    SANITIZED_FLAGS,
    SHARED_MODELS,
    STRICT_C,
    compile_library,
    export_library,
    sweep,
    tflm_outputs,
)

SECOND = ROOT / "examples" / "lcp_k4_int8.tflite"
COMPILERS = {
    "gcc": ["gcc"],
    "clang": ["clang"],
    "arm-none-eabi-gcc": ["arm-none-eabi-gcc", *CORTEX_M7],
}
#: The MLPerf Tiny models mcugen runs (the KWS "float32" file is a hybrid TFLM rejects too).
MLPERF = (
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_vww_mbv1_f32",
    "mlperf_ic_resnet8_int8",
    "mlperf_ic_resnet8_f32",
    "mlperf_ad_toycar_int8",
    "mlperf_sww_int8",
)


def compiler(name: str) -> list[str]:
    if shutil.which(COMPILERS[name][0]) is None:
        pytest.skip(f"{COMPILERS[name][0]} not installed")
    return COMPILERS[name]


def foreign_symbols(objects: list[Path], prefix: str) -> list[str]:
    """Symbols the objects define globally (weak ones too) outside `prefix`."""
    proc = subprocess.run(
        ["nm", "-g", "--defined-only", *map(str, objects)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    names = [ln.split()[-1] for ln in proc.stdout.splitlines() if len(ln.split()) == 3]
    assert names, "nm listed no symbols"
    return [n for n in names if not n.startswith(prefix)]


def check_library(model: Path, name: str, cc_name: str, tmp: Path, core: str = "host") -> None:
    cc = compiler(cc_name)
    export_library(model, name, tmp / name, core=core)
    objects = compile_library(tmp / name, cc, tmp / f"{name}-obj")
    assert foreign_symbols(objects, f"{name}_") == []


@pytest.mark.parametrize("cc_name", COMPILERS)
def test_lib_export_compiles_strict_and_defines_only_its_prefix(cc_name: str, tmp_path: Path):
    core = "cortex-m7" if cc_name.startswith("arm") else "host"
    check_library(EXAMPLE, "tiny", cc_name, tmp_path, core)


def test_two_exports_link_into_one_program_bit_exact_with_tflm(tmp_path: Path) -> None:
    """Two models linked together under ASan and UBSan, one arena shared between them, outputs
    bit for bit those of TFLM."""
    cc = compiler("gcc")
    gens = [export_library(m, n, tmp_path / n) for m, n in ((EXAMPLE, "first"), (SECOND, "second"))]
    sources = [str(p) for n in ("first", "second") for p in (tmp_path / n / "src").glob("*.c")]
    includes = [f"-I{tmp_path / n / d}" for n in ("first", "second") for d in ("include", "src")]
    exe = tmp_path / "two"
    driver = ROOT / "tests/c/test_export_two.c"
    cmd = [*cc, *SANITIZED_FLAGS, "-Wpedantic", *includes, str(driver), *sources, "-lm"]
    subprocess.run([*cmd, "-o", str(exe)], check=True, capture_output=True, text=True)
    samples = [[random_inputs(g.graph, 7 + k) for g in gens] for k in range(3)]
    blob = b"".join(a.tobytes() for sample in samples for model in sample for a in model)
    (tmp_path / "in.bin").write_bytes(blob)
    run = [str(exe), "3", str(tmp_path / "in.bin"), str(tmp_path / "out.bin")]
    proc = subprocess.run(run, capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "mcu-result status=0" in proc.stdout, proc.stdout + proc.stderr
    expected = []
    for sample in samples:
        for model, inputs in zip((EXAMPLE, SECOND), sample, strict=True):
            expected += [o.tobytes() for o in tflm_outputs(model.read_bytes(), [inputs])[0]]
    assert (tmp_path / "out.bin").read_bytes() == b"".join(expected)
    assert np.frombuffer(b"".join(expected), np.int8).size == 60


def cmake_build(lib: Path, build: Path, cc_name: str) -> Path:
    """Configure and build the export's CMakeLists.txt; the static library it makes."""
    if shutil.which("cmake") is None:
        pytest.skip("cmake not installed")
    cc = compiler(cc_name)
    flags = " ".join([*cc[1:], *STRICT_C[1:]])  # the C standard is the target's property
    cmd = ["cmake", "-S", str(lib), "-B", str(build), f"-DCMAKE_C_COMPILER={cc[0]}"]
    cmd += [f"-DCMAKE_C_FLAGS={flags}"]
    if cc_name.startswith("arm"):
        cmd += ["-DCMAKE_SYSTEM_NAME=Generic", "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY"]
    for step in (cmd, ["cmake", "--build", str(build), "-j", "2"]):
        proc = subprocess.run(step, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return next(build.glob("lib*.a"))


@pytest.mark.parametrize("cc_name", ["gcc", "arm-none-eabi-gcc"])
def test_cmake_export_builds_its_library(cc_name: str, tmp_path: Path) -> None:
    export_library(EXAMPLE, "tiny", tmp_path / "tiny", fmt="cmake")
    archive = cmake_build(tmp_path / "tiny", tmp_path / "build", cc_name)
    assert archive.name == "libtiny.a"
    assert foreign_symbols([archive], "tiny_") == []


@pytest.mark.models
@pytest.mark.parametrize(
    "model",
    # the suite: one int8 network of each kind and the float path; the rest in the sweeps
    sweep(MLPERF, lambda m: m in ("mlperf_kws_dscnn_int8", "mlperf_vww_mbv1_int8", MLPERF[4])),
)
def test_mlperf_exports_compile_strict_everywhere(model: str, tmp_path: Path) -> None:
    path = SHARED_MODELS / f"{model}.tflite"
    if not path.exists():
        pytest.skip(f"{path} not present")
    for cc_name in COMPILERS:
        if shutil.which(COMPILERS[cc_name][0]) is not None:
            core = "cortex-m7" if cc_name.startswith("arm") else "host"
            check_library(path, "lib_" + cc_name.replace("-", "_"), cc_name, tmp_path, core)
    export_library(path, "net", tmp_path / "net", fmt="cmake", core="cortex-m7")
    archive = cmake_build(tmp_path / "net", tmp_path / "b", "arm-none-eabi-gcc")
    assert foreign_symbols([archive], "net_") == []


def test_arduino_layout_compiles_as_the_ide_does(tmp_path: Path) -> None:
    """Arduino compiles every C file under src/ with src/ as the only include path (gnu11)."""
    cc = compiler("arm-none-eabi-gcc")
    export_library(EXAMPLE, "tiny", tmp_path / "tiny", fmt="arduino", core="cortex-m7")
    src = tmp_path / "tiny" / "src"
    for c in sorted(src.rglob("*.c")):
        cmd = [*cc, "-std=gnu11", "-Os", "-Wall", "-Wextra", "-Werror", f"-I{src}", "-c", str(c)]
        proc = subprocess.run([*cmd, "-o", str(tmp_path / f"{c.stem}.o")], capture_output=True)
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
