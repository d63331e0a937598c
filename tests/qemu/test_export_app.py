"""The worked application of examples/two_models: two exported models linked into one bare-metal
program for the nucleo-f767, run on its QEMU twin from one shared arena, each output bit for bit
TFLM's on the same windows of the application's sensor stream (issue 18)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.project import project_files
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate_from_file
from support import EXAMPLE, ROOT, SHARED_MODELS, export_library, tflm_outputs

APP = ROOT / "examples" / "two_models"
ROUNDS = 3
#: (kws, ad) pairs: two small stand-ins that ship with mcugen, and MLPerf Tiny's KWS and AD.
PAIRS = {
    "examples": (EXAMPLE, ROOT / "examples" / "lcp_k4_int8.tflite"),
    "mlperf": (
        SHARED_MODELS / "mlperf_kws_dscnn_int8.tflite",
        SHARED_MODELS / "mlperf_ad_toycar_int8.tflite",
    ),
}


def sensor_stream(count: int) -> bytes:
    """The application's sensor (main.c sensor_produce): xorshift32 from 1, top byte each."""
    x, out = 1, bytearray()
    for _ in range(count):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out.append(x >> 24)
    return bytes(out)


def link_script(gen: Generated) -> str:
    """The nucleo-f767 twin's linker script, as `mcugen build --board nucleo-f767 --emulate`
    writes it (one arena: the application's own)."""
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    return project_files(gen, target)["link.ld"].decode()


def build_app(kws: Path, ad: Path, tmp: Path) -> Path:
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "make"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")
    for model, name in ((kws, "kws"), (ad, "ad")):
        export_library(model, name, tmp / name, core="cortex-m7")
    (tmp / "link.ld").write_text(
        link_script(generate_from_file(kws, PlanOptions(core="cortex-m7")))
    )
    port = resolve_target(load_board("nucleo-f767"), emulate=True).port_board
    defs = " ".join(f"-D{k}={v}" for k, v in port.defines)
    cmd = ["make", "-s", "-j2", "-C", str(APP), f"MCUGEN={ROOT}", f"KWS={tmp / 'kws'}"]
    cmd += [f"AD={tmp / 'ad'}", f"LDSCRIPT={tmp / 'link.ld'}", f"OUT={tmp}", f"PORT_DEFS={defs}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "app.elf"


def run_twin(elf: Path) -> str:
    cmd = ["qemu-system-arm", "-M", "mps2-an500", "-nographic", "-monitor", "none"]
    cmd += ["-serial", "stdio", "-semihosting-config", "enable=on,target=native"]
    cmd += ["-icount", "shift=0,sleep=off", "-kernel", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.stdout


def expected_outputs(kws: Path, ad: Path) -> list[tuple[str, int, str]]:
    """What the application must print: TFLM's outputs on each model's windows of the stream."""
    graphs = {}
    for name, model in (("kws", kws), ("ad", ad)):
        graphs[name] = (model, generate_from_file(model, PlanOptions()).graph)
    sizes = {n: g.tensors[g.inputs[0]].nbytes for n, (_, g) in graphs.items()}
    stream, offset, rows = sensor_stream(ROUNDS * sum(sizes.values())), 0, []
    for r in range(ROUNDS):
        for name in ("kws", "ad"):
            model, graph = graphs[name]
            t = graph.tensors[graph.inputs[0]]
            window = np.frombuffer(stream[offset : offset + sizes[name]], np.int8)
            offset += sizes[name]
            out = tflm_outputs(model.read_bytes(), [[window.reshape(t.shape)]])[0][0]
            rows.append((name, r, out.tobytes().hex()))
    return rows


@pytest.mark.parametrize("pair", list(PAIRS))
def test_two_exported_models_run_bit_exact_on_the_twin(pair: str, tmp_path: Path) -> None:
    kws, ad = PAIRS[pair]
    if not kws.exists() or not ad.exists():
        pytest.skip(f"{kws.parent} not present")
    out = run_twin(build_app(kws, ad, tmp_path))
    rows = re.findall(r"result model=(\w+) round=(\d+) out=([0-9a-f]+)", out)
    assert [(m, int(r), h) for m, r, h in rows] == expected_outputs(kws, ad)
    assert re.search(rf"mcu-result status=0 rounds={ROUNDS} arena=\d+ kws_ticks=[1-9]", out), out
