"""The persistent state in C: a host build of a stateful model (int8 SVDF) with a driver that
invokes twice (the output changes: the state carried over), then calls mcu_reset_variables, then
mcu_init again (the first output comes back both times, as after TFLM's ResetVariableTensors)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import compile_project
from mcugen.firmware.project import executable_name, project_files
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.outputs import write_tree
from mcugen.pipeline import generate
from support import ROOT


def svdf_int8() -> bytes:
    rng = np.random.default_rng(3)
    b = GraphBuilder()
    x = b.input((1, 12), "int8", scale=0.05, zero_point=-3)
    wf = b.const(rng.integers(-127, 128, (8, 12), dtype=np.int8), scale=0.01)
    wt = b.const(rng.integers(-127, 128, (8, 4), dtype=np.int8), scale=0.02)
    bias = b.const(rng.integers(-500, 500, 8, dtype=np.int32), scale=float(np.float32(0.05 * 0.02)))
    state = b.variable((1, 32), "int8", scale=0.05, zero_point=-20)
    y = b.activation((1, 8), "int8", scale=0.5, zero_point=3)
    b.op("SVDF", [x, wf, wt, bias, state], [y], rank=1, fused_activation_function=0)
    b.output(y)
    return b.tflite()


def test_state_carries_over_and_resets(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    gen = generate(import_model(svdf_int8(), source="svdf"))
    assert gen.view_model.state_bytes == 32 and len(gen.view_model.variables) == 1
    host = resolve_target(load_board("host"), emulate=False)
    files = project_files(gen, host)
    files["main.c"] = (ROOT / "tests/c/test_reset_variables.c").read_bytes()
    write_tree(files, tmp_path)
    compile_project(tmp_path, host)
    exe = tmp_path / executable_name(host)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True)
    assert run.stdout.splitlines() == [
        "second invoke differs: 1",
        "after reset equal: 1",
        "after init equal: 1",
        "variables ok",
    ]
