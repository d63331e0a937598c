"""Helpers shared by more than one test module (test modules never import each other).

Sections: paths and model sets; host C drivers; comparing with TFLM (on the host and on the QEMU
twins); one-operator models (kernels/);
small networks planned with aliasing and rewrites (planners/); random graphs (planners/); HTML
report pages (unit/test_report_*).
A helper used by one test module stays in that module.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

import numpy as np
import pytest
from flatbuffers import flexbuffers
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mcugen import reference
from mcugen.boards import Target, load_board, resolve_target
from mcugen.codegen import quant
from mcugen.codegen.lower import _variants, lower, op_traits
from mcugen.codegen.render import render_model
from mcugen.codegen.viewmodel import build_view_model, lower_all, scratch_sizes
from mcugen.errors import RunError
from mcugen.firmware.compile import build
from mcugen.link.device_run import DeviceRun, open_device, run_samples
from mcugen.link.host_run import random_inputs, run_host
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate, rewritten
from mcugen.plan.aliasing import aliases_for
from mcugen.plan.buffers import activation_buffers
from mcugen.plan.layout.greedy import greedy_by_size
from mcugen.plan.memory_plan import MemoryPlan, plan_memory
from mcugen.plan.order import get_order
from mcugen.plan.persistent import persistent_layout
from mcugen.plan.pools import PoolMemory
from mcugen.plan.staging import staging_scratch
from mcugen.plan.target import MemoryTarget, TargetMemory

# --- Paths -------------------------------------------------------------------------------------

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
#: The shared models whose operators keep state across invokes (SVDF and LSTM variables).
STATEFUL_MODELS = (
    "tflm_keyword_scrambled_int8",
    "tflm_micro_speech_lstm_int8",
    "tflm_mnist_lstm_int8",
    "tflm_mnist_lstm_f32",
    "tflm_dtln_int8",
)
#: The int8 MLPerf Tiny models and TFLM's person_detect, in that order: the end-to-end set.
MLPERF_INT8 = (
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
    "mlperf_sww_int8",
    "tflm_person_detect_int8",
)


def example_module(name: str) -> ModuleType:
    """examples/<name>.py (a builder script) as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "tiny_cnn_int8.tflite"

# --- Sweeps ------------------------------------------------------------------------------------

#: `MCUGEN_FULL_SWEEP=1` (benchmarks/sweeps.py sets it) runs the long parametrizations whole; the
#: test suite runs each one's core cases, chosen so every operator family, board family and code
#: path the sweep covers is still covered (the suite must stay under 30 minutes on 2 cores).
FULL_SWEEP = os.environ.get("MCUGEN_FULL_SWEEP") == "1"


def sweep(cases: Sequence[Any], core: Callable[[Any], bool]) -> list[Any]:
    """All `cases` under `MCUGEN_FULL_SWEEP=1`, else those `core` keeps."""
    return list(cases) if FULL_SWEEP else [c for c in cases if core(c)]


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


def build_allocator_driver(driver_source: str, exe: Path) -> Path:
    """Compile tests/c/`driver_source` with runtime_c/src/allocator.c under the sanitizers;
    skips the test when the machine has no gcc."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    sources = [ROOT / "tests/c" / driver_source, ROOT / "runtime_c/src/allocator.c"]
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


# --- Comparing mcugen's host build with TFLM ---------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    samples: int
    max_abs_diff: float
    max_rel_diff: float
    mismatches: list[str]


def tflm_outputs(model: bytes, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    return reference.tflm_outputs(model, import_model(model, source="test model"), samples)


def mcugen_outputs(
    model: bytes,
    samples: list[list[np.ndarray]],
    generate_fn: Callable[[Graph], Generated] = generate,
) -> list[list[np.ndarray]]:
    """`generate_fn` turns the imported graph into C (e.g. after rewrites and aliasing)."""
    gen = generate_fn(import_model(model, source="test model"))
    with tempfile.TemporaryDirectory(prefix="mcugen-test-") as tmp:
        result = build(gen, resolve_target(load_board("host"), emulate=False), Path(tmp) / "proj")
        return run_host(result.executable, gen.graph, samples).outputs


def compare_with_tflm(
    model: bytes,
    *,
    samples: int = 5,
    seed: int = 0,
    rtol: float = 1e-5,
    inputs: list[list[np.ndarray]] | None = None,
    generate_fn: Callable[[Graph], Generated] = generate,
) -> Comparison:
    """Run `samples` seeded random inputs through mcugen's host build and TFLM; compare outputs.

    Integer outputs must be identical; float outputs within `rtol` relative (with an absolute floor
    of rtol times the largest reference magnitude, for values near zero).
    """
    graph = import_model(model, source="test model")
    inputs = inputs or [random_inputs(graph, seed + k) for k in range(samples)]
    ours = mcugen_outputs(model, inputs, generate_fn)
    ref = tflm_outputs(model, inputs)
    mismatches = []
    max_abs = max_rel = 0.0
    for k, (o_sample, r_sample) in enumerate(zip(ours, ref, strict=True)):
        for j, (o, r) in enumerate(zip(o_sample, r_sample, strict=True)):
            r = r.reshape(o.shape)
            diff = np.abs(o.astype(np.float64) - r.astype(np.float64))
            max_abs = max(max_abs, float(diff.max(initial=0)))
            max_rel = max(max_rel, float((diff / np.maximum(np.abs(r), 1e-30)).max(initial=0)))
            found = reference.first_difference(o, r, rtol)
            if found is not None:
                count, first = found
                mismatches.append(
                    f"sample {k} output {j}: {count}/{o.size} differ, first at flat index "
                    f"{first}: mcugen {o.ravel()[first]} vs TFLM {r.ravel()[first]}"
                )
    return Comparison(len(inputs), max_abs, max_rel, mismatches)


def assert_matches_tflm(model: bytes, **kwargs: object) -> Comparison:
    result = compare_with_tflm(model, **kwargs)  # type: ignore[arg-type]
    assert not result.mismatches, "\n".join(result.mismatches[:5])
    return result


def assert_state_carried_as_tflm(model: bytes, seed: int) -> None:
    """The same seeded input five times through one interpreter: TFLM's outputs change (the
    state carries over), and mcugen's outputs (and the state, if exposed) equal TFLM's each time."""
    repeated = [random_inputs(import_model(model), seed)] * 5
    ref = tflm_outputs(model, repeated)
    assert any(not np.array_equal(ref[0][0], r[0]) for r in ref[1:])
    assert_matches_tflm(model, inputs=repeated)


tflm_arena_head = reference.tflm_arena_head


#: Tests that build firmware and run it on a QEMU twin.
NEEDS_TWIN = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (scripts/install.sh)",
)


def run_twin_against_tflm(
    target: Target,
    elf: Path,
    model: bytes,
    graph: Graph,
    seeds: Sequence[int],
    varied: bool = False,
) -> DeviceRun:
    """Run seeded random inputs through `elf` on the emulated `target`; every output equals
    TFLM's bit for bit (and, if `varied`, is not constant: that would hide a wrong kernel)."""
    samples = [random_inputs(graph, s) for s in seeds]
    with open_device(target, elf, None) as link:
        run = run_samples(link, graph, samples, emulated=True)
    ref = reference.tflm_outputs(model, graph, samples)
    for k, (ours, theirs) in enumerate(zip(run.outputs, ref, strict=True)):
        for j, (o, r) in enumerate(zip(ours, theirs, strict=True)):
            assert np.array_equal(o, r.reshape(o.shape)), f"sample {k} output {j} differs"
            assert not varied or len(np.unique(o)) > 1, f"sample {k} output {j} is constant"
    return run


def one_line_error(call: Callable[[], object], bound_s: float) -> str:
    """The RunError `call` raises within `bound_s` seconds, as its one line."""
    start = time.monotonic()
    with pytest.raises(RunError) as caught:
        call()
    assert time.monotonic() - start < bound_s
    line = caught.value.line()
    assert "\n" not in line
    return line


# --- One-operator models (kernels/) ------------------------------------------------------------

#: TFLite's fused activation functions and paddings, as stored in operator options.
NONE, RELU, RELU_N1_TO_1, RELU6, TANH = 0, 1, 2, 3, 4
SAME, VALID = 0, 1
Quant = tuple[float, int]


#: Types whose operands `binary_model` quantizes (int32 and float32 operands carry none).
QUANTIZED = ("int8", "int16")


@dataclass(frozen=True)
class Operand:
    """One input of a binary op: its shape, quantization (int8 and int16 only), and whether it is
    constant."""

    shape: tuple[int, ...]
    quant: Quant = (0.05, 0)
    const: bool = False


def binary_model(
    opcode: str,
    dtype: str,
    a: Operand,
    b: Operand,
    out_quant: Quant = (0.1, 0),
    *,
    seed: int = 0,
    **options: Any,
) -> bytes:
    """A one-operator model `opcode(a, b)`; constant operands get seeded random data."""
    rng = np.random.default_rng(seed)
    builder = GraphBuilder()
    ids = [_operand(builder, rng, dtype, x) for x in (a, b)]
    shape = tuple(int(d) for d in np.broadcast_shapes(a.shape, b.shape))
    scale, zp = out_quant if dtype in QUANTIZED else (None, None)
    y = builder.activation(shape, dtype, scale=scale, zero_point=zp)
    builder.op(opcode, ids, [y], **options)
    builder.output(y)
    return builder.tflite()


def _operand(builder: GraphBuilder, rng: np.random.Generator, dtype: str, x: Operand) -> int:
    scale, zp = x.quant if dtype in QUANTIZED else (None, None)
    if not x.const:
        return builder.input(x.shape, dtype, scale=scale, zero_point=zp)
    if dtype == "float32":
        data = rng.standard_normal(x.shape).astype(np.float32)
    else:
        info = np.iinfo(np.dtype(dtype))
        data = rng.integers(info.min, int(info.max) + 1, x.shape).astype(dtype)
    return builder.const(np.asarray(data), scale=scale, zero_point=zp)


def lower_only(model: bytes) -> None:
    """Run mcugen's lowering on every operator (raises UnsupportedError for rejected ones)."""
    graph = import_model(model, source="test model")
    for op in graph.operators:
        lower(graph, op)


def unary_model(
    opcode: str,
    dtype: str,
    shape: tuple[int, ...],
    in_quant: Quant | None = None,
    out_quant: Quant | None = None,
    **options: Any,
) -> bytes:
    """A one-operator model `opcode(x)`; quantizations are (scale, zero point) or None."""
    b = GraphBuilder()
    iq, oq = in_quant or (None, None), out_quant or (None, None)
    x = b.input(shape, dtype, scale=iq[0], zero_point=iq[1])
    y = b.activation(shape, dtype, scale=oq[0], zero_point=oq[1])
    b.op(opcode, [x], [y], **options)
    b.output(y)
    return b.tflite()


BROADCASTS = {
    "same": (Operand((1, 8, 8, 16)), Operand((1, 8, 8, 16), (0.07, 5))),
    "channel_const": (Operand((1, 8, 8, 16)), Operand((1, 1, 1, 16), (0.02, -3), const=True)),
    "spatial": (Operand((1, 8, 8, 16)), Operand((1, 8, 8, 1), (0.09, 11))),
    "scalar_const": (Operand((1, 5, 7, 3)), Operand((), (0.03, 2), const=True)),
    "first_broadcasts": (Operand((1, 1, 1, 9), (0.2, -7), const=True), Operand((2, 3, 5, 9))),
    "both_broadcast": (Operand((1, 5, 1, 3)), Operand((4, 1, 6, 1), (0.04, 9))),
    "rank_mismatch": (Operand((2, 3, 5, 7)), Operand((3, 1, 7), (0.06, -20))),
    "rank5": (Operand((2, 1, 3, 4, 5)), Operand((2, 2, 1, 4, 1), (0.05, 1))),
    "rank6": (Operand((2, 1, 2, 3, 1, 3)), Operand((1, 3, 1, 3, 2, 1), (0.08, -1))),
    "flat": (Operand((37,)), Operand((37,), (0.01, 0))),
}


def symmetric(x: Operand) -> Operand:
    """The operand with zero point 0, as TFLM's int16 kernels require."""
    return Operand(x.shape, (x.quant[0], 0), x.const)


#: The same broadcasts for int16 operands (zero points 0).
INT16_BROADCASTS = {k: (symmetric(a), symmetric(b)) for k, (a, b) in BROADCASTS.items()}

# Float shapes kept small: float32 only needs to be close, a few hundred elements suffice.
FLOAT_BROADCASTS = {
    "same": (Operand((1, 3, 4, 5)), Operand((1, 3, 4, 5))),
    "channel_const": (Operand((1, 4, 3, 6)), Operand((1, 1, 1, 6), const=True)),
    "spatial": (Operand((1, 4, 3, 6)), Operand((1, 4, 3, 1))),
    "both_broadcast": (Operand((1, 5, 1, 3)), Operand((2, 1, 4, 1))),
    "rank6": (Operand((2, 1, 2, 3, 1, 3)), Operand((1, 3, 1, 3, 2, 1))),
    "scalar_const": (Operand((2, 7)), Operand((), const=True)),
}


# --- Small networks planned with aliasing and rewrites (planners/) -----------------------------


def generate_optimized(
    graph: Graph,
    *,
    rewrites: bool = True,
    aliasing: bool = True,
    order: str | tuple[int, ...] = "stored",
    kernels: str = "opt",
) -> Generated:
    """As `pipeline.generate`, after `rewrite` and with `aliases_for` (greedy-by-size layout).
    `order` names an order strategy, or gives the order itself (of the graph after rewrites)."""
    g = rewritten(graph) if rewrites else graph
    traits = op_traits(g)
    lowered = lower_all(g, tuple(range(len(g.operators))), kernels=kernels)
    scratch = scratch_sizes(lowered)
    if isinstance(order, str):
        chosen = get_order(order)(g, scratch=scratch).order
        aliases = aliases_for(g, chosen, traits, scratch=scratch) if aliasing else None
        plan = plan_memory(
            g,
            order=order,
            layout="greedy_by_size",
            scratch=scratch,
            aliases=aliases,
            traits=traits,
        )
    else:
        aliases = aliases_for(g, order, traits, scratch=scratch) if aliasing else None
        staged = staging_scratch(g, aliases or {}, scratch, traits)
        buffers = activation_buffers(g, order, staged, aliases)
        plan = MemoryPlan(
            order,
            buffers,
            greedy_by_size(buffers),
            "given",
            "greedy_by_size",
            persistent=persistent_layout(g),
        )
        plan.validate(g, traits)
    vm = build_view_model(g, plan, lowered, "model")
    return Generated(g, plan, lowered, vm, render_model(vm))


def arenas(model: bytes, **kwargs: Any) -> tuple[MemoryPlan, MemoryPlan]:
    """(plain plan, optimized plan) of a model, both validated."""
    graph = import_model(model, source="test model")
    kernels = kwargs.get("kernels", "opt")
    plain = generate_optimized(graph, rewrites=False, aliasing=False, kernels=kernels).plan
    return plain, generate_optimized(graph, **kwargs).plan


class Net:
    """A GraphBuilder with int8 or float32 activations and seeded random weights."""

    def __init__(self, dtype: str, seed: int = 0) -> None:
        self.b = GraphBuilder()
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)

    def q(self, scale: float, zero_point: int) -> dict[str, Any]:
        return {"scale": scale, "zero_point": zero_point} if self.dtype == "int8" else {}

    def shape(self, t: int) -> tuple[int, ...]:
        return self.b.tensors[t].shape

    def input(self, shape: Sequence[int], q: tuple[float, int] = (0.05, -3)) -> int:
        return self.b.input(shape, self.dtype, **self.q(*q))

    def act(self, shape: Sequence[int], q: tuple[float, int] = (0.1, 2)) -> int:
        return self.b.activation(shape, self.dtype, **self.q(*q))

    def op(self, opcode: str, inputs: list[int], shape: Sequence[int], **options: Any) -> int:
        q = options.pop("q", (0.1, 2))
        y = self.act(shape, q)
        self.b.op(opcode, inputs, [y], **options)
        return y

    def weights(self, shape: tuple[int, ...], axis: int, in_scale: float) -> tuple[int, int]:
        """(filter, bias) constants with per-channel int8 scales on `axis`, or float32."""
        channels = shape[axis]
        if self.dtype == "float32":
            w = self.b.const((self.rng.standard_normal(shape) * 0.3).astype(np.float32))
            return w, self.b.const(self.rng.standard_normal(channels).astype(np.float32))
        scales = self.rng.uniform(0.002, 0.02, channels)
        data = self.rng.integers(-127, 128, shape, dtype=np.int8)
        w = self.b.const(data, scale=scales, zero_point=0, axis=axis)
        bias = self.rng.integers(-3000, 3000, channels, dtype=np.int32)
        return w, self.b.const(bias, scale=in_scale * scales)

    def conv(self, x: int, out_c: int, kernel: int = 1, stride: int = 1, **kw: Any) -> int:
        n, h, w, c = self.shape(x)
        padding = kw.pop("padding", SAME)
        oh, ow = (_out(d, kernel, stride, padding) for d in (h, w))
        filt, bias = self.weights((out_c, kernel, kernel, c), 0, self._scale(x))
        options = _conv_options(stride, padding, kw.pop("act", NONE))
        return self.op("CONV_2D", [x, filt, bias], (n, oh, ow, out_c), **options, **kw)

    def dwconv(self, x: int, kernel: int = 3, stride: int = 1, **kw: Any) -> int:
        n, h, w, c = self.shape(x)
        padding = kw.pop("padding", SAME)
        oh, ow = (_out(d, kernel, stride, padding) for d in (h, w))
        filt, bias = self.weights((1, kernel, kernel, c), 3, self._scale(x))
        options = _conv_options(stride, padding, kw.pop("act", NONE))
        return self.op(
            "DEPTHWISE_CONV_2D",
            [x, filt, bias],
            (n, oh, ow, c),
            depth_multiplier=1,
            **options,
            **kw,
        )

    def _scale(self, t: int) -> float:
        q = self.b.tensors[t].quant
        return q.scale if q is not None else 1.0

    def model(self, *outputs: int) -> bytes:
        self.b.output(*outputs)
        return self.b.tflite()


def _out(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + stride - 1) // stride if padding == SAME else (size - kernel) // stride + 1


def _conv_options(stride: int, padding: int, act: int) -> dict[str, int]:
    return {
        "padding": padding,
        "stride_h": stride,
        "stride_w": stride,
        "dilation_h_factor": 1,
        "dilation_w_factor": 1,
        "fused_activation_function": act,
    }


# --- Random graphs (planners/) -----------------------------------------------------------------


@st.composite
def random_dags(draw: st.DrawFn) -> Graph:
    """Random operator graphs: each operator reads 1-3 earlier tensors and writes 1-2 new ones."""
    n_inputs = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, 5000)) for _ in range(n_inputs)]
    tensors = [Tensor(i, f"in{i}", (s,), "int8") for i, s in enumerate(sizes)]
    ops = []
    for k in range(draw(st.integers(1, 25))):
        reads = draw(
            st.lists(st.integers(0, len(tensors) - 1), min_size=1, max_size=3, unique=True)
        )
        outs = []
        for _ in range(draw(st.integers(1, 2))):
            size = draw(st.integers(0, 5000))
            outs.append(len(tensors))
            tensors.append(Tensor(len(tensors), f"t{len(tensors)}", (size,), "int8"))
        ops.append(Operator(k, "ADD", 1, tuple(reads), tuple(outs), MappingProxyType({})))
    consumed = {t for op in ops for t in op.inputs}
    produced = [t for op in ops for t in op.outputs]
    outputs = tuple(t for t in produced if t not in consumed) or (produced[-1],)
    return Graph(tuple(tensors), tuple(ops), tuple(range(n_inputs)), outputs)


def flex_options(**options: int | bool) -> bytes:
    """A custom operator's options as the FlexBuffer map TFLM's signal library reads (keys sorted
    by the builder, values by position)."""
    return bytes(flexbuffers.Dumps(options))


def floor_model(folder: Path) -> Path:
    """floor.tflite in `folder`: one float32 FLOOR, an operator mcugen does not support."""
    b = GraphBuilder()
    x = b.input((1, 4), "float32")
    y = b.activation((1, 4), "float32")
    b.op("FLOOR", [x], [y])
    b.output(y)
    path = folder / "floor.tflite"
    path.write_bytes(b.tflite())
    return path


def custom_model(
    code: str,
    inputs: Sequence[tuple[Sequence[int], str] | np.ndarray],
    outputs: Sequence[tuple[Sequence[int], str]],
    options: bytes,
) -> bytes:
    """A one-operator model of custom operator `code`: each input a (shape, dtype) model input or
    a constant array; every output is a model output."""
    b = GraphBuilder()
    ids = [b.const(x) if isinstance(x, np.ndarray) else b.input(x[0], x[1]) for x in inputs]
    outs = [b.activation(shape, dtype) for shape, dtype in outputs]
    b.custom(code, ids, outs, options)
    b.output(*outs)
    return b.tflite()


# --- Shared by the kernel tests: convolution models and the optimised variants' check ----------


def window_out_hw(
    in_hwc: tuple[int, int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    padding: int,
) -> tuple[int, int]:
    """Output height and width of a convolution window (TFLite's SAME and VALID)."""
    dims = []
    for i in range(2):
        eff = (kernel[i] - 1) * dilation[i] + 1
        size = in_hwc[i] if padding == SAME else in_hwc[i] - eff + 1
        dims.append((size + stride[i] - 1) // stride[i])
    return dims[0], dims[1]


def pool_window(
    in_shape: Sequence[int], filt: Sequence[int], stride: Sequence[int], padding: int, act: int
) -> tuple[list[int], dict[str, int]]:
    """A 2-D pooling's output height and width (TFLite's SAME or VALID) and its options."""
    out_hw = [quant.out_size(padding, in_shape[1 + i], filt[i], stride[i]) for i in range(2)]
    options = {
        "padding": padding,
        "stride_h": stride[0],
        "stride_w": stride[1],
        "filter_height": filt[0],
        "filter_width": filt[1],
        "fused_activation_function": act,
    }
    return out_hw, options


@dataclass(frozen=True)
class Window:
    """The window CONV_2D and DEPTHWISE_CONV_2D share: geometry, activation, batch, weights."""

    in_hwc: tuple[int, int, int] = (9, 11, 3)
    kernel: tuple[int, int] = (3, 3)
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: int = SAME
    act: int = NONE
    batch: int = 1
    per_channel: bool = True

    def out_hw(self) -> tuple[int, int]:
        return window_out_hw(self.in_hwc, self.kernel, self.stride, self.dilation, self.padding)

    def window_options(self, **extra: int) -> dict[str, int]:
        """The operator's options, `extra` before the activation (the order the bytes keep)."""
        return {
            "padding": self.padding,
            "stride_h": self.stride[0],
            "stride_w": self.stride[1],
            "dilation_h_factor": self.dilation[0],
            "dilation_w_factor": self.dilation[1],
            **extra,
            "fused_activation_function": self.act,
        }


@dataclass(frozen=True)
class Conv(Window):
    out_c: int = 5
    groups: int = 1
    bias: bool = True
    out_scale: float = 0.16
    weight_max: int = 127  # weights drawn from [-weight_max, weight_max]

    def options(self) -> dict[str, int]:
        return self.window_options()

    def filter_shape(self) -> tuple[int, int, int, int]:
        return (self.out_c, *self.kernel, self.in_hwc[2] // self.groups)


def conv_int8(c: Conv, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((c.batch, *c.in_hwc), "int8", scale=0.04, zero_point=-9)
    w_scales = rng.uniform(0.002, 0.02, c.out_c) if c.per_channel else 0.011
    weights = rng.integers(-c.weight_max, c.weight_max + 1, c.filter_shape(), dtype=np.int8)
    w = b.const(weights, scale=w_scales, zero_point=0, axis=0)
    inputs = [x, w]
    if c.bias:
        bias_scale = 0.04 * np.atleast_1d(w_scales)
        inputs.append(b.const(rng.integers(-3000, 3000, c.out_c, dtype=np.int32), scale=bias_scale))
    else:
        inputs.append(-1)
    y = b.activation((c.batch, *c.out_hw(), c.out_c), "int8", scale=c.out_scale, zero_point=3)
    b.op("CONV_2D", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


@st.composite
def window_convs(
    draw: st.DrawFn,
    kernels: Sequence[tuple[int, int]],
    strides: Sequence[tuple[int, int]],
    dilations: Sequence[tuple[int, int]],
    grow: int,
    in_channels: st.SearchStrategy[int],
    out_channels: int,
    out_scales: Sequence[float] = (0.16,),
) -> Conv:
    """Random int8 convolutions for the general variant's tests: images up to `grow` past the
    dilated filter, 1x1 filters strided (1x1 stride 1 is conv_2d_1x1_s8's)."""
    kernel = draw(st.sampled_from(kernels))
    stride = draw(st.sampled_from(strides))
    if kernel == (1, 1) and stride == (1, 1):
        stride = (2, 2)
    dilation = draw(st.sampled_from(dilations))
    padding = draw(st.sampled_from([SAME, VALID]))
    eff = [(k - 1) * d + 1 for k, d in zip(kernel, dilation, strict=True)]
    h = draw(st.integers(1 if padding == SAME else eff[0], eff[0] + grow))
    w = draw(st.integers(1 if padding == SAME else eff[1], eff[1] + grow))
    return Conv(
        in_hwc=(h, w, draw(in_channels)),
        out_c=draw(st.integers(1, out_channels)),
        kernel=kernel,
        stride=stride,
        dilation=dilation,
        padding=padding,
        act=draw(st.sampled_from([0, 1, 3])),
        batch=draw(st.integers(1, 2)),
        bias=draw(st.booleans()),
        per_channel=draw(st.booleans()),
        out_scale=draw(st.sampled_from(out_scales)),
    )


@dataclass(frozen=True)
class Dw(Window):
    in_hwc: tuple[int, int, int] = (9, 11, 6)
    mult: int = 1
    bias: str = "const"  # "const"; "absent": two inputs; "omitted": third input -1
    option_mult: int | None = None  # the depth_multiplier written in the options, if not `mult`

    @property
    def out_c(self) -> int:
        return self.in_hwc[2] * self.mult

    def options(self) -> dict[str, int]:
        mult = self.mult if self.option_mult is None else self.option_mult
        return self.window_options(depth_multiplier=mult)


def dw_int8(c: Dw, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((c.batch, *c.in_hwc), "int8", scale=0.05, zero_point=11)
    w_scales = rng.uniform(0.003, 0.03, c.out_c) if c.per_channel else 0.013
    filt = rng.integers(-127, 128, (1, *c.kernel, c.out_c), dtype=np.int8)
    inputs = [x, b.const(filt, scale=w_scales, zero_point=0, axis=3)]
    if c.bias == "const":
        bias_scale = 0.05 * np.atleast_1d(w_scales)
        inputs.append(b.const(rng.integers(-2000, 2000, c.out_c, dtype=np.int32), scale=bias_scale))
    elif c.bias == "omitted":
        inputs.append(-1)
    y = b.activation((c.batch, *c.out_hw(), c.out_c), "int8", scale=0.2, zero_point=-4)
    b.op("DEPTHWISE_CONV_2D", inputs, [y], **c.options())
    b.output(y)
    return b.tflite()


SLOW = settings(
    max_examples=12 if FULL_SWEEP else 6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def reference_kernels(graph: Graph) -> Generated:
    return generate(graph, options=PlanOptions(kernels="reference"))


def assert_variant_exact(model: bytes, variant: str, samples: int = 2) -> Generated:
    """`variant` runs some operator of `model`, and opt == reference == TFLM on seeded inputs."""
    gen = generate(import_model(model, source="test model"))
    chosen = {low.variant for low in gen.lowered.values()}
    assert variant in chosen, chosen
    inputs = [random_inputs(gen.graph, seed) for seed in range(samples)]
    ours = mcugen_outputs(model, inputs)
    theirs = mcugen_outputs(model, inputs, reference_kernels)
    for a, b in zip(ours, theirs, strict=True):
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y), "opt and reference kernels differ"
    result = compare_with_tflm(model, inputs=inputs)
    assert not result.mismatches, result.mismatches[:3]
    return gen


def int8_classifier(seed: int = 0, depth: int = 16, hidden: int = 12, classes: int = 4) -> Graph:
    """An int8 model for training tests: FULLY_CONNECTED (relu) -> FULLY_CONNECTED -> SOFTMAX,
    per-channel weights, the converter's quantization of a softmax output."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input((1, depth), "int8", scale=0.05, zero_point=0)
    h, width, scale = x, depth, 0.05
    for units, act, out_scale in ((hidden, 1, 0.08), (classes, 0, 0.15)):
        w_scales = rng.uniform(0.004, 0.01, units)
        w = b.const(rng.integers(-127, 128, (units, width), dtype=np.int8), scale=w_scales)
        bias = b.const(
            rng.integers(-400, 400, units, dtype=np.int32), scale=scale * w_scales, zero_point=0
        )
        y = b.activation((1, units), "int8", scale=out_scale, zero_point=-20 if act else 3)
        b.op("FULLY_CONNECTED", [h, w, bias], [y], fused_activation_function=act)
        h, width, scale = y, units, out_scale
    probs = b.activation((1, classes), "int8", scale=1.0 / 256, zero_point=-128)
    b.op("SOFTMAX", [h], [probs], beta=1.0)
    b.output(probs)
    return b.graph()


def synthetic_dataset(graph: Graph, samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) a linear model can learn: int8 samples of the model's input, labels the argmax of
    a fixed random projection of them."""
    rng = np.random.default_rng(seed)
    x_t = graph.tensors[graph.inputs[0]]
    classes = graph.tensors[graph.outputs[0]].shape[-1]
    x = rng.integers(-100, 101, (samples, *x_t.shape[1:]), dtype=np.int8)
    projection = rng.normal(0, 1, (int(np.prod(x_t.shape[1:])), classes))
    y = np.argmax(x.reshape(samples, -1).astype(np.float64) @ projection, axis=1)
    return x, y.astype(np.int64)


def classifier_file(folder: Path, samples: int, seed: int) -> tuple[Path, np.ndarray, np.ndarray]:
    """int8_classifier(seed) written as clf.tflite in `folder`, and `samples` of its synthetic
    dataset (seed + 1)."""
    graph = int8_classifier(seed=seed)
    path = folder / "clf.tflite"
    path.write_bytes(write_model(graph))
    return (path, *synthetic_dataset(graph, samples, seed=seed + 1))


def mobilenet_stem(seed: int, hw: int = 40, width: int = 8) -> Graph:
    """MobileNetV2-like: a stride-2 stem, a separable block, an inverted bottleneck (1x1
    expansion to 6x, depthwise stride 2, 1x1 projection: the high-resolution expansion is the
    peak), two more stride-2 separable blocks, a classifier."""
    from testgraphs import _Net

    net = _Net(seed, "stem")
    x = net.image(hw, 3)
    x = net.conv(x, width, 3, 2, relu=True)
    x = net.sep_conv(x, width // 2, relu=True)
    x = net.conv(x, 6 * width, 1, relu=True)
    x = net.sep_conv(x, width, stride=2)
    x = net.sep_conv(x, 2 * width, stride=2, relu=True)
    x = net.sep_conv(x, 4 * width, stride=2, relu=True)
    return net.finish(net.classifier(x, 4))


def conv_chain(seed: int = 3) -> Graph:
    """A float model: CONV_2D, DEPTHWISE_CONV_2D, CONV_2D, a strided CONV_2D (ReLU, 3 x 3, SAME),
    FULLY_CONNECTED and SOFTMAX over a 12 x 12 x 4 input; trained whole, every activation is
    kept for the backward pass."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    h = b.input((1, 12, 12, 4), "float32")
    shape = (12, 12, 4)
    window = {"padding": 0, "dilation_h_factor": 1, "dilation_w_factor": 1}
    for kind, channels, stride in (
        ("CONV_2D", 8, 1),
        ("DEPTHWISE_CONV_2D", 8, 1),
        ("CONV_2D", 8, 1),
        ("CONV_2D", 8, 2),
    ):
        depthwise = kind == "DEPTHWISE_CONV_2D"
        filt = (1, 3, 3, shape[2]) if depthwise else (channels, 3, 3, shape[2])
        w = b.const(rng.normal(0, 0.3, filt).astype(np.float32))
        bias = b.const(rng.normal(0, 0.1, channels).astype(np.float32))
        shape = (shape[0] // stride, shape[1] // stride, channels)
        y = b.activation((1, *shape), "float32")
        extra = {"depth_multiplier": 1} if depthwise else {}
        b.op(
            kind,
            [h, w, bias],
            [y],
            **window,
            stride_h=stride,
            stride_w=stride,
            **extra,
            fused_activation_function=1,
        )
        h = y
    depth = int(np.prod(shape))
    w = b.const(rng.normal(0, depth**-0.5, (5, depth)).astype(np.float32))
    logits = b.activation((1, 5), "float32")
    b.op(
        "FULLY_CONNECTED",
        [h, w, b.const(np.zeros(5, np.float32))],
        [logits],
        fused_activation_function=0,
    )
    probs = b.activation((1, 5), "float32")
    b.op("SOFTMAX", [logits], [probs], beta=1.0)
    b.output(probs)
    return b.graph()


# --- HTML report pages (mcugen report) --------------------------------------------------------


class PageParser(HTMLParser):
    """The embedded figures, every `data-figure` element's text, and the SVG charts by id."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: dict[str, str] = {}
        self.charts: dict[str, int] = {}  # svg id -> shapes in it
        self.json_text = ""
        self.urls: list[str] = []
        self._figure: str | None = None
        self._in_json = False
        self._svg: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.urls += [v or "" for k, v in attrs if k in ("src", "href")]
        if "data-figure" in a:
            self._figure = a["data-figure"]
            self.shown[self._figure or ""] = ""
        if tag == "script" and a.get("id") == "figures":
            self._in_json = True
        if tag == "svg":
            self._svg = a.get("id") or ""
            self.charts[self._svg] = 0
        elif self._svg is not None and tag in ("rect", "line", "polyline", "text"):
            self.charts[self._svg] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "span":
            self._figure = None
        if tag == "script":
            self._in_json = False
        if tag == "svg":
            self._svg = None

    def handle_data(self, data: str) -> None:
        if self._figure is not None:
            self.shown[self._figure] += data
        if self._in_json:
            self.json_text += data


def parse_page(html: str) -> PageParser:
    parser = PageParser()
    parser.feed(html)
    return parser


def at(figures: Any, path: str) -> Any:
    for key in path.split("."):
        figures = figures[int(key)] if isinstance(figures, list) else figures[key]
    return figures


def assert_page_shows_the_json(html: str) -> dict[str, Any]:
    """Every figure the page shows is the embedded JSON's, as the page formats it
    (report.html.render.number); returns the embedded figures."""
    page = parse_page(html)
    figures = json.loads(page.json_text)
    assert len(page.shown) > 10
    for path, text in page.shown.items():
        value = at(figures, path)
        if value is None:
            assert text == "-", path
            continue
        shown = float(text.replace(",", ""))
        decimals = len(text.split(".")[1]) if "." in text else 0
        assert math.isclose(shown, round(value, decimals), abs_tol=10**-decimals / 2), path
    return figures


def pool_target(
    memories: Sequence[PoolMemory], stack: int = 0, firmware_ram: int = 0
) -> MemoryTarget:
    """A target of internal memories only, no RAM total (a library built for its memories):
    what pool assignment sees; patch stages are then tried when the pools do not fit."""
    return MemoryTarget(
        "test",
        stack=stack,
        firmware_ram=firmware_ram,
        memories=tuple(
            TargetMemory(m.name, "SRAM", 0, m.size, m.read_cycles_per_byte, m.write_cycles_per_byte)
            for m in memories
        ),
    )


def resized(target: MemoryTarget, name: str, size: int) -> MemoryTarget:
    """`target` with its memory `name` shrunk (or grown) to `size` bytes."""
    found = [m.name for m in target.memories]
    assert name in found, f"{name} not in {found}"
    memories = tuple(
        TargetMemory(**{**m.__dict__, "size": size}) if m.name == name else m
        for m in target.memories
    )
    return MemoryTarget(**{**target.__dict__, "memories": memories})


def conv_variant(conv: Conv) -> str:
    """The optimised variant that takes `conv`: the stem kernel's shapes, else the general one."""
    from mcugen.codegen.lower._conv_stem import applies

    stem = conv.groups == 1 and applies(conv.in_hwc[2], conv.kernel[0], conv.dilation)
    return "conv_2d_stem_s8" if stem else "conv_2d_s8"


#: The fast variants the lean ones (codegen/lower/opt_lean.py) follow in a layer's ladder.
FAST_VARIANTS = frozenset({"depthwise_conv_2d_s8", "depthwise_conv_2d_s8_layer", "conv_2d_1x1_s8"})


@contextmanager
def lean_only() -> Iterator[None]:
    """The variant registry without the fast variants the lean ones follow."""
    saved = list(_variants.VARIANTS)
    _variants.VARIANTS[:] = [v for v in saved if v.name not in FAST_VARIANTS]
    try:
        yield
    finally:
        _variants.VARIANTS[:] = saved


def dw_after_add(hw: tuple[int, int], channels: int, stride: int, zp: int) -> bytes:
    """x -> ADD(x, x) -> 3x3 depthwise: the depthwise may run in place over the sum, which dies
    there (the model input itself is never overwritten)."""
    rng = np.random.default_rng(channels * 10 + stride)
    b = GraphBuilder()
    x = b.input((1, *hw, channels), "int8", scale=0.05, zero_point=zp)
    h = b.activation((1, *hw, channels), "int8", scale=0.1, zero_point=zp)
    b.op("ADD", [x, x], [h])
    w_scales = rng.uniform(0.003, 0.03, channels)
    w = b.const(rng.integers(-127, 128, (1, 3, 3, channels), dtype=np.int8), scale=w_scales, axis=3)
    bias = b.const(rng.integers(-2000, 2000, channels, dtype=np.int32), scale=0.1 * w_scales)
    out_hw = tuple((n + stride - 1) // stride for n in hw)
    y = b.activation((1, *out_hw, channels), "int8", scale=0.2, zero_point=-4)
    b.op(
        "DEPTHWISE_CONV_2D",
        [h, w, bias],
        [y],
        padding=SAME,
        stride_h=stride,
        stride_w=stride,
        depth_multiplier=1,
    )
    b.output(y)
    return b.tflite()
