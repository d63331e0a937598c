"""mcugen's Python API (issue 36; docs/api.md): plan, estimate, build, run and verify a model on a
board from Python, with the figures the commands' `--json` prints.

    from mcugen import api
    result = api.plan("kws.tflite", board="nucleo-f767", options={"kernels": "memory"})
    result.fits, result.arena_bytes, result.report   # report: what `mcugen plan --json` prints

A model is a path, the bytes of a .tflite or .onnx file, or a `mcugen.model.ir.Graph` (from
`mcugen.model.builder.GraphBuilder`). Options are a `PlanOptions`, or a mapping of the command
line's names ("order", "kernels", "no_inplace": `mcugen.options.CHOICES`) built as the command
line builds them. Results are frozen dataclasses; their `report` is the command's JSON object.
Errors are `mcugen.errors.McugenError` (one line: `err.line()`). The commands call the same
functions (mcugen/figures.py, options_from), so both give the same figures.

Versioned by API_VERSION: a field or argument is only added within a version; renaming or
removing one makes the next. Cheap enough for a search loop: everything is imported once, boards
are read once per process, and no call leaves a file behind (builds use a temporary folder
unless given one).
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.figures import (
    allocator_figures,
    device_report,
    host_report,
    linked_fit,
    plan_model,
    strategy_runs,
)
from mcugen.firmware.fits import target_fit
from mcugen.kernel_costs import estimated_instructions
from mcugen.model.ir import Graph
from mcugen.model.load import is_onnx, load_model
from mcugen.model.numerics import float_nodes_note
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions, options_from
from mcugen.pipeline import Generated, render
from mcugen.plan.fit import Fit, weight_bytes
from mcugen.report.text import plan_json

#: The API's version: fields and arguments are only added within a version.
API_VERSION = 1

Model = str | os.PathLike[str] | bytes | Graph
Options = PlanOptions | Mapping[str, Any] | None


@dataclass(frozen=True)
class PlanResult:
    """A plan of a model for a board, as `mcugen plan --board B --json` reports it. The fit
    fields are None without a board (or on the host); `unsupported` says what the runtime lacks
    ("" when it runs the model); the estimate is from per-MAC costs measured on the twins
    (mcugen/kernel_costs.py) and the board's energy model, a guide, not a measurement."""

    model_sha256: str
    board: str
    arena_bytes: int
    peak_live_bytes: int
    lower_bound: int
    order_strategy: str
    layout_strategy: str
    unsupported: str
    fits: bool | None
    problem: str  # why it does not fit, as `mcugen plan --board` says it ("" when it fits)
    ram_need: int | None
    ram_free: int | None  # the board's RAM less ram_need (negative: short by that much)
    flash_need: int | None
    flash_free: int | None
    flash_linked: bool
    estimated_instructions: int | None
    estimated_ms: float | None
    estimated_uj: float | None
    report: Mapping[str, Any]
    #: what the commands print as notes on stderr: an ONNX model's nodes onnxruntime runs in
    #: float under `--onnx-numerics ort` (mcugen/model/numerics.py; also the report's
    #: "onnx_float_nodes")
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunResult:
    """One inference on a board's QEMU twin (or the host), as `mcugen run --json` reports it:
    instructions (`unit`) per inference, the linked RAM and flash, and the board's estimated
    time and energy from the twin's instructions (None without an energy model or on the host)."""

    model_sha256: str
    board: str
    emulated: bool
    unit: str
    per_inference: int | None
    arena_bytes: int
    ram_bytes: int | None
    flash_bytes: int | None
    estimated_ms: float | None
    estimated_uj: float | None
    report: Mapping[str, Any]


@dataclass(frozen=True)
class BuildResult:
    """A compiled firmware: its project folder and executable (None when built in a temporary
    folder, which is gone), flash and RAM as linked (None on the host)."""

    model_sha256: str
    board: str
    directory: Path | None
    executable: Path | None
    files: int
    arena_bytes: int
    flash_bytes: int | None
    ram_bytes: int | None


@dataclass(frozen=True)
class VerifyResult:
    """The device's outputs against TFLM's interpreter, as `mcugen verify --json` reports it."""

    model_sha256: str
    board: str
    ok: bool
    samples: int
    mismatches: tuple[str, ...]
    report: Mapping[str, Any]


def load(model: Model, numerics: str | None = None) -> Graph:
    """The model as a graph: a path read as `mcugen` reads it, bytes of a .tflite or .onnx file
    (an ONNX model with `numerics`, `--onnx-numerics`), or a graph as it is (its sha256 that of
    its .tflite form when it has none)."""
    if isinstance(model, Graph):
        if model.sha256:
            return model
        return replace(model, sha256=hashlib.sha256(write_model(model)).hexdigest())
    if isinstance(model, bytes):
        if is_onnx("", model[:8]):
            from mcugen.model.numerics import DEFAULT
            from mcugen.model.onnx_import import import_onnx

            return import_onnx(model, source="<bytes>", numerics=numerics or DEFAULT)
        from mcugen.model.tflite_import import import_model

        return import_model(model, source="<bytes>")
    return load_model(Path(model), numerics=numerics)


@functools.lru_cache(maxsize=64)
def target(board: str | None, *, emulate: bool = False) -> Target:
    """The build target of `board` (None: the host), on its QEMU twin with `emulate`; read once
    per process."""
    return resolve_target(load_board(board or "host"), emulate=emulate)


def plan_options(options: Options, on: Target) -> PlanOptions:
    """`options` for target `on`: a mapping built as the command line builds its arguments, a
    `PlanOptions` given the target's memories and core."""
    firmware = not on.board.is_host
    if options is None or isinstance(options, Mapping):
        return options_from(options or {}, firmware=firmware, target=on)
    built = options_from({}, firmware=firmware, target=on)
    return replace(options, target=built.target, core=built.core)


def plan(
    model: Model,
    board: str | None = None,
    options: Options = None,
    *,
    emulate: bool = False,
    link: bool = True,
    strategies: bool = False,
) -> PlanResult:
    """Plan `model` for `board` as `mcugen plan --board` does. `link` False skips linking the
    firmware (flash then counts the weights only: fast, for search loops); `strategies` adds
    every registered order and layout to the report (slow: one plan each)."""
    on = target(board, emulate=emulate)
    opts = plan_options(options, on)
    graph = load(model, opts.onnx_numerics)
    planned = plan_model(graph, opts)
    runs = strategy_runs(graph, planned, in_place=not planned.unsupported) if strategies else None
    report = plan_json(planned.graph, planned.plan, runs, timings=False)
    fit: Fit | None = None
    if not on.board.is_host:
        if link:
            fit = linked_fit(planned, on, graph.name or "model")
        else:
            weights = weight_bytes(planned.graph)
            fit = target_fit(planned.graph, planned.plan, opts.allocator, weights, on)
            fit = replace(fit, unsupported=planned.unsupported)
        report["fit"] = fit.as_json()
    instructions = ms = uj = None
    if planned.lowered is not None:
        instructions = estimated_instructions(planned.graph, planned.lowered)
        energy = on.board.energy
        if energy is not None and not on.board.is_host:
            estimate = energy.estimate(instructions, on.board.clock_hz)
            ms, uj = round(estimate.ms, 3), round(estimate.uj, 1)
    return PlanResult(
        model_sha256=graph.sha256,
        board=on.board.name,
        arena_bytes=report["arena_bytes"],
        peak_live_bytes=report["peak_live_bytes"],
        lower_bound=report["lower_bound"],
        order_strategy=report["order_strategy"],
        layout_strategy=report["layout_strategy"],
        unsupported=planned.unsupported,
        fits=fit.fits if fit is not None else None,
        problem=_problem(fit),
        ram_need=fit.ram_need if fit is not None else None,
        ram_free=fit.ram_size - fit.ram_need if fit is not None else None,
        flash_need=fit.flash_need if fit is not None else None,
        flash_free=fit.flash_size - fit.flash_need if fit is not None else None,
        flash_linked=fit is not None and fit.linked is not None,
        estimated_instructions=instructions,
        estimated_ms=ms,
        estimated_uj=uj,
        report=report,
        notes=notes_of(graph),
    )


def notes_of(graph: Graph) -> tuple[str, ...]:
    """The notes the commands print on stderr for `graph` (`PlanResult.notes`)."""
    note = float_nodes_note(graph)
    return () if note is None else (note,)


def _problem(fit: Fit | None) -> str:
    problem = fit.problem() if fit is not None else None
    return problem.line() if problem is not None else ""


def generate(model: Model, board: str | None, options: Options, emulate: bool) -> Generated:
    """The firmware sources of `model` for `board` (an unsupported operator: one error)."""
    on = target(board, emulate=emulate)
    opts = plan_options(options, on)
    graph = load(model, opts.onnx_numerics)
    planned = plan_model(graph, opts)
    if planned.lowered is None:
        from mcugen.errors import UnsupportedError

        raise UnsupportedError(f"model cannot be built: {planned.unsupported}")
    gen = render(
        planned.graph,
        planned.lowered,
        planned.plan,
        model_name=_c_name(graph),
        allocator=opts.allocator,
    )
    return replace(gen, source=str(model) if isinstance(model, str | os.PathLike) else "")


def _c_name(graph: Graph) -> str:
    name = "".join(c if c.isalnum() else "_" for c in (graph.name or "model"))
    return name if name[:1].isalpha() else f"m_{name}"


def build(
    model: Model,
    board: str | None = None,
    options: Options = None,
    *,
    emulate: bool = False,
    output: str | os.PathLike[str] | None = None,
) -> BuildResult:
    """Generate and compile the firmware as `mcugen build` does, into `output` (None: a
    temporary folder, removed before returning)."""
    from mcugen.firmware.compile import build as compile_firmware
    from mcugen.firmware.sizes import firmware_sizes, linked_ram

    on = target(board, emulate=emulate)
    gen = generate(model, board, options, emulate)
    with tempfile.TemporaryDirectory(prefix="mcugen-api-") as tmp:
        out = Path(output) if output is not None else Path(tmp) / "project"
        result = compile_firmware(gen, on, out)
        flash = ram = None
        if not on.board.is_host:
            sizes = firmware_sizes(result.executable, on)
            flash, ram = sizes.flash_bytes, linked_ram(sizes, gen.plan).total
    kept = output is not None
    return BuildResult(
        model_sha256=gen.graph.sha256,
        board=on.board.name,
        directory=result.directory if kept else None,
        executable=result.executable if kept else None,
        files=len(result.files),
        arena_bytes=allocator_figures(gen)["arena_bytes"],
        flash_bytes=flash,
        ram_bytes=ram,
    )


def run(
    model: Model,
    board: str | None = None,
    options: Options = None,
    *,
    emulate: bool = True,
    seed: int = 0,
    profile: bool = False,
) -> RunResult:
    """Build and run one seeded random input on `board`'s QEMU twin (or the host), as
    `mcugen run --board B --emulate --json` does (without its static-offsets baseline of a
    dynamic allocator). A board without a twin needs `emulate` False and is refused here: the
    API does not open serial ports."""
    from mcugen.firmware.compile import build as compile_firmware
    from mcugen.link.host_run import random_inputs

    on = target(board, emulate=emulate and board not in (None, "host"))
    if not on.board.is_host and not on.emulate:
        raise McugenError(f"{on.board.name} runs here only on its QEMU twin", hint="emulate=True")
    gen = generate(model, board, options, on.emulate)
    samples = [random_inputs(gen.graph, seed)]
    with tempfile.TemporaryDirectory(prefix="mcugen-api-") as tmp:
        result = compile_firmware(gen, on, Path(tmp) / "project")
        if on.board.is_host:
            report = host_report(gen, result, samples)
        else:
            report = device_report(gen, on, result, samples, None, profile)
    report.pop("_outputs")
    report["source"] = f"random input (seed {seed})"
    report.update({k: v for k, v in allocator_figures(gen).items() if k != "arena_bytes"})
    estimate = report.get("estimate") or {}
    return RunResult(
        model_sha256=gen.graph.sha256,
        board=on.board.name,
        emulated=on.emulate,
        unit=report.get("unit", "seconds"),
        per_inference=report.get("per_inference"),
        arena_bytes=report["arena_bytes"],
        ram_bytes=report["ram"]["total"] if "ram" in report else None,
        flash_bytes=report["sizes"]["flash_bytes"] if "sizes" in report else None,
        estimated_ms=estimate.get("ms"),
        estimated_uj=estimate.get("uj"),
        report=report,
    )


def verify(
    model: Model,
    board: str | None = None,
    options: Options = None,
    *,
    emulate: bool = True,
    samples: int = 5,
    seed: int = 0,
) -> VerifyResult:
    """The outputs of `samples` seeded random inputs on `board`'s twin (or the host) against
    TFLM's reference interpreter, as `mcugen verify --json` reports them."""
    from mcugen.link.host_run import random_inputs
    from mcugen.link.verify import verify as compare

    on = target(board, emulate=emulate and board not in (None, "host"))
    graph = load(model, plan_options(options, on).onnx_numerics)
    with tempfile.TemporaryDirectory(prefix="mcugen-api-") as tmp:
        onnx = isinstance(model, bytes) and is_onnx("", model[:8])
        path = Path(tmp) / ("model.onnx" if onnx else "model.tflite")
        if isinstance(model, str | os.PathLike):
            path = Path(model)
        else:
            path.write_bytes(model if isinstance(model, bytes) else write_model(graph))
        gen = replace(generate(graph, board, options, on.emulate), source=str(path))
        inputs = [random_inputs(gen.graph, seed + k) for k in range(samples)]
        report = compare(gen, on, inputs, port=None)
    return VerifyResult(
        model_sha256=graph.sha256,
        board=on.board.name,
        ok=report.ok,
        samples=report.samples,
        mismatches=tuple(report.mismatches),
        report=report.as_json(),
    )
