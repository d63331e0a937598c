"""What several commands share: planning options and the target from the arguments, the generated
firmware, the inputs, and printing memory, allocator and device figures (build, run, measure,
flash).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from mcugen.boards import MLPERF_MODES, Target, load_board, resolve_target, with_mlperf_mode
from mcugen.commands._estimate_mix import print_mix_estimate
from mcugen.errors import McugenError
from mcugen.figures import allocator_figures as allocator_figures
from mcugen.figures import arena_bytes as arena_bytes
from mcugen.figures import device_report as device_report
from mcugen.figures import energy_estimate as energy_estimate
from mcugen.figures import outputs_json as outputs_json
from mcugen.firmware.compile import BuildResult
from mcugen.model.ir import Graph
from mcugen.model.load import load_model
from mcugen.model.numerics import float_nodes_note
from mcugen.options import CHOICES, PlanOptions, options_from
from mcugen.options import patch_choice as patch_choice
from mcugen.pipeline import Generated, generate_from_file
from mcugen.plan import dynamic


def target_for(args: argparse.Namespace) -> Target:
    """The board of `--board`, natively or on its QEMU twin with `--emulate`, its firmware in the
    MLPerf Tiny mode of `--mlperf-mode`; without `--board` the host, said on the first line of the
    output so a user who forgot it sees it."""
    if args.board is None:
        if not getattr(args, "json", False):  # JSON output names its board itself
            print(
                "mcugen: no --board given: using the host board (this machine's gcc); "
                "`mcugen boards` lists the others"
            )
        args.board = "host"
    target = resolve_target(load_board(args.board), emulate=getattr(args, "emulate", False))
    mode = getattr(args, "mlperf_mode", MLPERF_MODES[0])
    return target if mode == MLPERF_MODES[0] else with_mlperf_mode(target, mode)


def generate_for(args: argparse.Namespace, target: Target) -> Generated:
    """The model of the arguments, planned for `target`, lowered and rendered; the layers given
    a kernel with less scratch for memory (`--kernels memory|auto`) said in one line, as `plan`
    lists them, unless the output is JSON (which carries them in the plan)."""
    options = plan_options(args, firmware=not target.board.is_host, target=target)
    gen = generate_from_file(args.model, options)
    note_float_nodes(args, gen.graph)
    if not getattr(args, "json", False):
        from mcugen.report.text import kernel_choice_lines

        for line in kernel_choice_lines(gen.graph, gen.plan)[:1]:
            print(f"mcugen: {line}")
    return gen


def plan_options(
    args: argparse.Namespace, *, firmware: bool = False, target: Target | None = None
) -> PlanOptions:
    """The planning options of the arguments, built as the API builds them (options_from)."""
    given = {name: getattr(args, name, None) for name in CHOICES}
    return options_from(given, firmware=firmware, target=target)


def load_for(args: argparse.Namespace) -> Graph:
    """The model of the arguments, an ONNX one with the numerics of `--onnx-numerics`."""
    graph = load_model(args.model, numerics=getattr(args, "onnx_numerics", None))
    note_float_nodes(args, graph)
    return graph


def note_float_nodes(args: argparse.Namespace, graph: Graph) -> None:
    """Once per command, on stderr: the nodes of an ONNX model onnxruntime runs in float, where
    the outputs may differ from its (mcugen/model/numerics.py)."""
    import sys

    note = float_nodes_note(graph)
    if note is not None and not vars(args).get("float_nodes_noted"):
        args.float_nodes_noted = True
        print(f"mcugen: note: {args.model}: {note}", file=sys.stderr)


def print_memory(gen: Generated, target: Target, result: BuildResult) -> None:
    """Flash and RAM use of a built project by part, in the fit verdict's vocabulary (RAM: arena,
    model state, runtime state, stack; `plan.fit.RamUse`), and the allocator (build, flash)."""
    if gen.plan.staging:
        from mcugen.report.text import staging_line

        print(f"  {staging_line(gen.plan)}")
    if target.board.is_host:
        print(f"  arena:    {arena_bytes(gen):,} bytes")
        print_allocator(gen)
        weights = sum(len(c.data) for c in gen.view_model.constants)
        print(f"  weights:  {weights} bytes")
        return
    from mcugen.firmware.sizes import firmware_sizes, linked_ram

    sizes = firmware_sizes(result.executable, target)
    print(f"  {'flash:':9} {_of(sizes.flash_bytes, sizes.flash_limit)}")
    for what, size, _, where in sizes.rows():
        if where == "flash":
            print(f"    {what:24} {size:>9,}")
    ram = linked_ram(sizes, gen.plan)
    print(f"  {'RAM:':9} {_of(ram.total, ram.size)}")
    for name, size in ram.parts():
        print(f"    {name:24} {size:>9,}")
        if name == "arena":
            for memory, part in ram.pools:
                print(f"      pool in {memory:15} {part:>9,}")
    if ram.slow:
        print(f"  {ram.slow_memory + ':':9} {ram.slow:,} bytes (outside the RAM)")
    print_allocator(gen)
    print_pools(gen, sizes.pools)


def _of(used: int, limit: int) -> str:
    return f"{used:,} of {limit:,} bytes ({100 * used / limit:.1f} %), {limit - used:,} free"


def print_pools(gen: Generated, linked: tuple[tuple[str, int], ...]) -> None:
    """The arena's split over the memories (plan/pools), as planned and as linked."""
    split = gen.plan.pools
    if split is None or not split.split or gen.dynamic is not None:
        return
    sections = dict(linked)
    print(
        f"  pools:    {split.strategy}, modelled access cost {split.cost:,.0f} cycles (all in "
        f"{split.pools[0].name}: {split.fastest_cost:,.0f}, all in the slowest: "
        f"{split.slowest_cost:,.0f})"
    )
    for p in split.pools:
        print(
            f"    {p.name:8} {p.size:>9} bytes, {len(p.offsets)} buffers (linked "
            f"{sections.get(p.name, 0)}); the memory holds {p.memory.size + p.memory.reserved}"
            + (f", {p.memory.reserved} of it firmware RAM and stack" if p.memory.reserved else "")
        )


def print_allocator(gen: Generated) -> None:
    f = allocator_figures(gen)
    if f["allocator"] == dynamic.STATIC:
        print("  allocator: static offsets, nothing moved")
        return
    what = "copied to and from the slow memory" if f["allocator"] == "paged" else "moved"
    print(
        f"  allocator: {f['allocator']}, arena {f['arena_bytes']:,} bytes (static offsets "
        f"would need {f['static_arena_bytes']:,}), {f['moved_bytes_per_inference']:,} bytes "
        f"{what} per inference"
    )


def inputs_for(args: argparse.Namespace, graph: Graph, count: int) -> list[list[np.ndarray]]:
    """The `--input` file as one sample (exactly the model's input types and shapes, or float
    quantized with `--quantize-input`, said on stderr), else `count` random samples seeded from
    `--seed`. Commands call it before planning, so a wrong file costs nothing."""
    from mcugen.link.host_run import random_inputs

    if getattr(args, "input", None):
        return [read_sample(args, args.input, graph)]
    return [random_inputs(graph, args.seed + k) for k in range(count)]


def read_sample(args: argparse.Namespace, path: Path, graph: Graph) -> list[np.ndarray]:
    """One sample from `path`, as `--input` reads it."""
    from mcugen.io import load_inputs

    quantize = bool(getattr(args, "quantize_input", False))
    sample = load_inputs(path, graph, quantize=quantize)
    if quantize:
        note_quantized(path, graph)
    return sample


def note_quantized(path: Path, graph: Graph) -> None:
    """Say on stderr which inputs `--quantize-input` quantized, and how."""
    import sys

    for i, t_index in enumerate(graph.inputs):
        t = graph.tensors[t_index]
        if t.quant is not None and len(t.quant.scales) == 1 and t.dtype != "float32":
            print(
                f"mcugen: note: {path} input {i}: float values quantized to {t.dtype} with "
                f"scale {t.quant.scales[0]:.6g}, zero point {t.quant.zero_points[0]} "
                "(--quantize-input)",
                file=sys.stderr,
            )


def require_location(target: Target, port: str | None) -> None:
    """A Cortex-M board runs either on its QEMU twin (--emulate) or on a serial port (--port),
    and the port must exist: checked before anything is built."""
    if port and target.board.is_host:
        raise McugenError(
            "--port names a serial port, but the host board runs as a process on this machine",
            hint="drop --port, or name the board on that port with --board",
        )
    if port and target.emulate:
        raise McugenError(
            "--port and --emulate conflict: the QEMU twin has no serial port to open",
            hint="drop one of them",
        )
    if not target.board.is_host and not target.emulate and not port:
        raise McugenError(
            f"say where {target.board.name} runs",
            hint="add --emulate (its QEMU twin) or --port /dev/ttyACM0",
        )
    if port and "://" not in port and not Path(port).exists():  # pyserial URLs are not files
        raise McugenError(
            "serial port not found",
            where=port,
            hint="plug the board in and check the name (ls /dev/ttyACM* /dev/ttyUSB*)",
        )


def print_estimate(r: dict[str, Any]) -> None:
    """One labelled line: the estimate is a model of the board, not a measurement."""
    e = r.get("estimate")
    if e is None:
        if "estimate_note" in r:
            print(f"  estimate: none ({r['estimate_note']})")
        print_mix_estimate(r)
        return
    how = "UNCALIBRATED" if e["calibration"].startswith("none") else "calibrated"
    print(
        f"  ESTIMATE for {e['board']} at {e['clock_hz'] / 1e6:.0f} MHz, not a measurement: "
        f"{e['ms']:,.2f} ms and {e['uj']:,.1f} uJ per inference ({e['cycles_per_instruction']} "
        f"cycles per twin instruction, {e['run_mw']} mW running; {how}: "
        f"boards/{e['board']}/board.toml [energy])"
    )
    print_mix_estimate(r)


def print_device_figures(r: dict[str, Any]) -> None:
    """Per-inference count, RAM (as `plan --board` says it), stack high-water and flash of a
    `device_report`."""
    per_mac = f" ({r['per_mac']} per MAC)" if r.get("per_mac") else ""
    print(f"  per inference: {r['per_inference']:,} {r['unit']}{per_mac}")
    print(f"  {r['ram_text']}")
    print(f"  stack used {r['stack_used']:,} of {r['stack_bytes']:,} bytes")
    if r.get("moved_bytes"):
        print(f"  moved or paged by the allocator: {r['moved_bytes']:,} bytes per inference")
    s = r["sizes"]
    print(
        f"  flash {s['flash_bytes']:,} of {s['flash_limit']:,} bytes (weights "
        f"{0 if s['external_weights'] else s['weights']:,}, code {s['code']:,}, tables "
        f"{s['other_rodata']:,})"
        + (f"; weights {s['external_weights']:,} bytes outside it" if s["external_weights"] else "")
    )


def print_operator_table(r: dict[str, Any]) -> None:
    """The per-operator rows of a profiled `device_report` (nothing if it was not profiled)."""
    for row in r.get("per_operator", []):
        count, macs = row[r["unit"]], row.get("macs", 0)
        per_mac = f"{count / macs:6.2f}/MAC" if macs else ""
        uj = f"  ~{row['estimate_uj']:,.1f} uJ" if "estimate_uj" in row else ""
        mix = ""
        if "mix_cycles" in row:
            mix = f"  ~{row['mix_cycles']:,} cycles (mix), {row['loads']['flash']:,} flash loads"
        print(
            f"    step {row['step']:>3}  op {row['operator']:>3} {row['opcode']:<24} "
            f"{row.get('kernel', ''):<20} {count:>12,} {per_mac:<11}{uj}{mix}"
        )
