"""Paging end to end: the planned schedule against what the firmware does on the QEMU twin.

For MCUNet VWW, ST YAMNet, the MLPerf Tiny int8 models (IC ResNet-8, KWS DS-CNN, VWW MobileNet
v1, AD ToyCar) in ../shared/models and the generated RandWire and NAS graphs
(testgraphs.benchmark_suite, written to a temporary .tflite), on disco-f746ng emulated
(its twin mps2-an500; the twin's PSRAM stands in for the SDRAM). Per model, each plan is built
and run on the twin with one random sample (fixed seed), its outputs compared with TFLM's
interpreter as `mcugen verify` does:
- budget "none": the plan `mcugen verify` makes without a budget (static offsets, its arena A):
  the baseline, "instr no paging";
- budgets A/2 and A/4 (rounded down to 16 bytes): paged between the fast RAM and the slow
  memory, in the order paging chose (`--order auto`: the candidate it pages at the least cost);
- before the first budget paged in an order, budget "W ...": that order paged with a budget of
  its whole-buffer arena W (the plan paging starts from: buffers move whole), where every buffer
  fits in fast memory and nothing need be copied (the row shows whether the pager copies): what
  the copies' instructions of the budgets in that order are counted from.
One markdown row per plan: the pager and its gap to the lower bound, the bytes the schedule pages
in and out against the bytes the firmware paged in the inference (moved_bytes), instructions per
inference with paging, without it and the measured overhead, the copies' instructions (over the
budget W paged run), the modelled overhead and its share of the baseline, the modelled cost of
every buffer in slow memory and the ratio of paging to it, bit-exactness and planning seconds. A
plan that cannot be made, built or run prints its one-line error.

Instructions stand in for cycles: QEMU counts instructions (-icount shift=0), so the modelled
overhead (cycles) is set against the baseline's instruction count. QEMU has no wait states: the
instruction counts show only the copies' own instructions, not the slow memory's latency the
cost model charges for, nor what a kernel working in slow memory pays there. The measured
overhead against the baseline also holds the paged plan's other differences (its order; whole
buffers, which change which operators run in place with a staging scratch and so the kernels'
paths; the allocator's tables), which can make it negative; the copies' instructions column
leaves those out.
Run: PYTHONPATH=. .venv/bin/python benchmarks/paging_runs.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.link.verify import FLOAT_RTOL
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan import order
from mcugen.plan.paging.target import PagingPlan
from mcugen.plan.target import memory_target
from mcugen.reference import first_difference, tflm_outputs
from testgraphs import benchmark_suite

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
BOARD = "disco-f746ng"
FRACTIONS = (2, 4)
SEED = 0
SHARED = (
    "mcunet_vww_mixed",
    "st_yamnet_aed_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ad_toycar_int8",
)
GENERATED = ("randwire", "nas")
QUICK = ("mlperf_ic_resnet8_int8", "randwire_ws12")
COLUMNS = (
    "model",
    "ops",
    "arena A B",
    "budget B",
    "pager",
    "planned in / out B",
    "measured paged B",
    "planned = measured",
    "instr paged",
    "instr no paging",
    "measured overhead",
    "copies' instr",
    "modelled overhead cycles",
    "modelled / no-paging instr",
    "all in slow cycles",
    "paging / all in slow",
    "bit-exact",
    "plan s",
)

Samples = list[list[np.ndarray]]  # [sample][input or output]
ModelFile = Callable[[Path], Path]  # a scratch directory -> the model's .tflite


@dataclass(frozen=True)
class Measured:
    """One inference on the twin: instructions, bytes the firmware paged, outputs as TFLM's."""

    instructions: int
    moved_bytes: int
    exact: bool


@dataclass(frozen=True)
class Baseline:
    """A model planned with no budget and run: what every paged run is compared with."""

    name: str
    graph: Graph
    samples: Samples
    reference: Samples
    arena: int
    instructions: int


def shared_model(stem: str, scratch: Path) -> Path:
    return SHARED_MODELS / f"{stem}.tflite"


def generated_model(name: str, make: Callable[[], Graph], scratch: Path) -> Path:
    """The generated graph as a .tflite in `scratch`: TFLM's interpreter needs a file."""
    path = scratch / f"{name}.tflite"
    path.write_bytes(write_model(make(), description=f"mcugen {name}"))
    return path


def models(quick: bool) -> list[tuple[str, ModelFile]]:
    found: list[tuple[str, ModelFile]] = [(s, partial(shared_model, s)) for s in SHARED]
    for name, make in benchmark_suite():
        if any(kind in name for kind in GENERATED):
            found.append((name, partial(generated_model, name, make)))
    return [(name, file) for name, file in found if not quick or name in QUICK]


def plan_options(target: Target, budget: int | None, order_name: str) -> PlanOptions:
    """As `mcugen verify --board disco-f746ng --emulate [--ram-budget B] [--order O]` plans."""
    return PlanOptions(order=order_name, target=memory_target(target, budget), keep_input="auto")


def planned(
    graph: Graph, target: Target, budget: int | None, order_name: str = order.DEFAULT
) -> tuple[Generated, float]:
    """The generated firmware sources and the seconds planning and rendering took."""
    start = time.perf_counter()
    options = plan_options(target, budget, order_name)
    gen = generate(graph, model_name="model", options=options)
    return gen, time.perf_counter() - start


def run_on_twin(gen: Generated, target: Target, samples: Samples, reference: Samples) -> Measured:
    """Build `gen`, run the first sample on the twin, compare its outputs with TFLM's."""
    with tempfile.TemporaryDirectory(prefix="mcugen-paging-runs-") as tmp:
        result = build(gen, target, Path(tmp) / "project")
        with open_device(target, result.executable, None) as link:
            run = run_samples(link, gen.graph, samples[:1], emulated=True)
    pairs = zip(run.outputs[0], reference[0], strict=True)
    exact = all(first_difference(ours, ref, FLOAT_RTOL) is None for ours, ref in pairs)
    return Measured(run.instructions(run.ticks_per_inference[0]), run.moved_bytes, exact)


def one_line(err: Exception) -> str:
    if isinstance(err, McugenError):
        return err.line()
    text = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__}: {text} (a bug in mcugen)"


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:+.3f} %" if whole else "-"


def pager_cell(gen: Generated, plan: PagingPlan) -> str:
    """The pager that made the schedule, whether it is proven optimal or how far above the
    lower bound it may be, and the order it paged."""
    s = plan.schedule
    if s.proven_optimal:
        quality = "optimal"
    elif s.lower_bound:
        quality = f"gap {100 * (s.cost / s.lower_bound - 1):.1f} %"
    else:
        quality = "gap inf"
    note = f" ({s.note})" if s.note else ""
    return f"{s.strategy}, {quality}{note}; order {gen.plan.order_strategy}"


def schedule_cells(gen: Generated, measured: Measured) -> list[str]:
    """Pager, planned bytes in / out, bytes the firmware paged, and whether the two agree."""
    plan = gen.plan.paging
    if plan is None:
        return ["-", "-", f"{measured.moved_bytes:,}", "-"]
    s = plan.schedule
    same = s.bytes_in + s.bytes_out == measured.moved_bytes
    return [
        pager_cell(gen, plan),
        f"{s.bytes_in:,} / {s.bytes_out:,}",
        f"{measured.moved_bytes:,}",
        "yes" if same else "NO",
    ]


def cost_cells(
    plan: PagingPlan | None, measured: Measured, baseline: int, all_fast: int | None
) -> list[str]:
    """Instructions with and without paging, the measured overhead, the copies' instructions
    (over `all_fast`, the same order paged with every buffer fast), the modelled overhead, and
    every buffer in slow memory."""
    if plan is None:
        return ["-", f"{baseline:,}"] + ["-"] * 6
    overhead = plan.cost / 1000
    whole = plan.all_in_slow
    return [
        f"{measured.instructions:,}",
        f"{baseline:,}",
        percent(measured.instructions - baseline, baseline),
        "-" if all_fast is None else f"{measured.instructions - all_fast:+,}",
        f"{overhead:,.0f}",
        percent(overhead, baseline),
        "-" if whole is None else f"{whole / 1000:,.0f}",
        f"{plan.cost / whole:.3f}" if whole else "-",
    ]


def row(
    model: Baseline,
    budget: str,
    gen: Generated,
    seconds: float,
    measured: Measured,
    all_fast: int | None = None,
) -> str:
    plan = gen.plan.paging
    cells = [model.name, f"{len(gen.plan.order)}", f"{model.arena:,}", budget]
    cells += schedule_cells(gen, measured)
    cells += cost_cells(plan, measured, model.instructions, all_fast)
    cells += ["yes" if measured.exact else "NO", f"{seconds:.2f}"]
    return "| " + " | ".join(cells) + " |"


def error_row(name: str, arena: str, budget: str, err: Exception) -> str:
    return f"| {name} | - | {arena} | {budget} | error: {one_line(err)} |"


def baseline(
    name: str, model_file: ModelFile, target: Target, scratch: Path
) -> tuple[Baseline, str]:
    """The model planned with no budget and run on the twin, and its row."""
    path = model_file(scratch)
    graph = load_model(path)
    gen, seconds = planned(graph, target, None)
    samples = [random_inputs(gen.graph, SEED)]
    reference = tflm_outputs(path.read_bytes(), gen.graph, samples)
    measured = run_on_twin(gen, target, samples, reference)
    base = Baseline(name, graph, samples, reference, gen.plan.arena_bytes, measured.instructions)
    return base, row(base, "none", gen, seconds, measured)


def all_fast(model: Baseline, target: Target, paged: Generated) -> tuple[int | None, str]:
    """The order of `paged` paged with a budget of its whole-buffer arena, where every buffer
    fits in fast memory (the pager may still copy: the row shows it); its instructions (None
    when it fails) and its row."""
    name, whole = paged.plan.order_strategy, paged.plan.arena_bytes
    label = f"W {whole:,}"
    try:
        gen, seconds = planned(model.graph, target, whole, name)
        measured = run_on_twin(gen, target, model.samples, model.reference)
    except Exception as err:  # reported in its row: the paged run still prints
        return None, error_row(model.name, f"{model.arena:,}", label, err)
    return measured.instructions, row(model, label, gen, seconds, measured, measured.instructions)


def budget_rows(
    model: Baseline, target: Target, budget: int, fast_runs: dict[str, int | None]
) -> Iterator[str]:
    """The row of `budget`, after the budget W row of its order when that is the first time
    the order is paged (`fast_runs`: the budget W instructions by order, filled here)."""
    try:
        gen, seconds = planned(model.graph, target, budget)
        measured = run_on_twin(gen, target, model.samples, model.reference)
    except Exception as err:  # reported in its row: the other budgets and models still run
        yield error_row(model.name, f"{model.arena:,}", f"{budget:,}", err)
        return
    name = gen.plan.order_strategy
    if name not in fast_runs:
        fast_runs[name], line = all_fast(model, target, gen)
        yield line
    yield row(model, f"{budget:,}", gen, seconds, measured, fast_runs[name])


def model_rows(name: str, model_file: ModelFile, target: Target, scratch: Path) -> Iterator[str]:
    try:
        model, first = baseline(name, model_file, target, scratch)
    except Exception as err:  # reported in its row: the other models still run
        yield error_row(name, "-", "none", err)
        return
    yield first
    fast_runs: dict[str, int | None] = {}
    for fraction in FRACTIONS:
        yield from budget_rows(model, target, model.arena // fraction // 16 * 16, fast_runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="ResNet-8 and one small RandWire")
    args = parser.parse_args()
    target = resolve_target(load_board(BOARD), emulate=True)
    print("| " + " | ".join(COLUMNS) + " |")
    print("|---" * len(COLUMNS) + "|")
    with tempfile.TemporaryDirectory(prefix="mcugen-paging-models-") as tmp:
        for name, model_file in models(args.quick):
            for line in model_rows(name, model_file, target, Path(tmp)):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
