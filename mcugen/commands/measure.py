"""`mcugen measure`: latency and memory of a model on a board or its QEMU twin.

Two ways to drive the same firmware:
- by default, mcugen's binary protocol with per-operator profiling: instructions (QEMU, 1 per ns of
  virtual time with -icount shift=0) or core cycles (board) per inference and per operator, arena,
  stack high-water, flash and RAM;
- with --mlperf, the MLPerf Tiny runner's text protocol as EEMBC's EnergyRunner speaks it (name,
  profile, db load, db, infer, results; mcugen/link/mlperf.py). Latency comes from the device's two
  m-lap-us timestamps; the device's results are compared with TFLM's dequantized output
  (`host.mlperf.compare_results`).

With --mlperf-mode energy the firmware runs MLPerf Tiny's energy mode (9600 baud, timestamps as
falling edges of the board's timestamp pin, no m-lap-us lines): the exchange and the comparison
with TFLM are the same, and the latency and energy belong to the power monitor that records the
edges (X-NUCLEO-LPM01A or Nordic PPK2).
With --power NAME:PORT (a real board on --port, energy-mode firmware), a power monitor
(X-NUCLEO-LPM01A or Nordic PPK2, mcugen/link/power) supplies the board while the runner's exchange
runs `infer N W` several times; the energy per inference comes from the current between the
firmware's GPIO marks (`host.power.bench.run_energy`). Without it the report says energy was not
measured instead of printing a number.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from mcugen.boards import Target, with_mlperf_mode
from mcugen.commands._common import (
    device_report,
    energy_estimate,
    generate_for,
    inputs_for,
    load_for,
    print_device_figures,
    print_estimate,
    print_operator_table,
    require_location,
    target_for,
)
from mcugen.commands._estimate_mix import check_mix, mix_report
from mcugen.commands._options import (
    device_options,
    estimate_option,
    mlperf_mode_option,
    model_options,
    non_negative,
    positive,
    quantize_input_option,
    supply_mv,
)
from mcugen.errors import McugenError, RunError, UnsupportedError
from mcugen.firmware.compile import BuildResult, build
from mcugen.link.device_run import QEMU_INSTRUCTIONS_PER_SECOND
from mcugen.link.mlperf import (
    RESULT_DECIMALS,
    check_model_id,
    compare_results,
    default_infer,
    dequantized,
)
from mcugen.link.power import PowerSpec, parse_power_spec
from mcugen.model.ir import DTYPES
from mcugen.model.load import reference_flatbuffer
from mcugen.pipeline import Generated
from mcugen.report.mlperf import print_energy, print_mlperf

ENERGY_NOTE = (
    "not measured: energy needs a real board on --port running energy-mode firmware and a power "
    "monitor supplying it (--power lpm01a:PORT for an X-NUCLEO-LPM01A, ppk2:PORT for a Nordic PPK2)"
)
ENERGY_MODE_NOTE = (
    "not measured: the firmware marked the timed loop on its timestamp pin ({pin}) for a power "
    "monitor (X-NUCLEO-LPM01A input D7 or a Nordic PPK2 logic input): measure the board on --port "
    "with --power lpm01a:PORT or ppk2:PORT"
)


def energy_note(target: Target) -> str:
    if target.mlperf_mode != "energy":
        return ENERGY_NOTE
    return ENERGY_MODE_NOTE.format(pin=target.port_board.timestamp_pin)


def infer_counts(args: argparse.Namespace, model_id: str, emulated: bool) -> tuple[int, int]:
    """(inferences, warm-ups): as given, else the runner's figures (a few under emulation)."""
    default = default_infer(model_id, emulated)
    count = args.count if args.count is not None else default[0]
    warmup = args.warmup if args.warmup is not None else default[1]
    return count, warmup


HELP = "latency, operators and memory on a board or its QEMU twin"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (("save_trace", "file"),)


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p)
    device_options(p)
    estimate_option(p)
    p.add_argument("--input", type=Path, default=None, help="the input (.npy or .npz)")
    quantize_input_option(p)
    p.add_argument(
        "--mlperf",
        action="store_true",
        help="drive the firmware as the MLPerf Tiny (EEMBC EnergyRunner) runner does",
    )
    mlperf_mode_option(p)
    p.add_argument(
        "--count",
        type=positive,
        default=None,
        help="timed inferences with --mlperf (default: the runner's figure, 3 under --emulate)",
    )
    p.add_argument(
        "--warmup", type=non_negative, default=None, help="warm-up inferences with --mlperf"
    )
    p.add_argument(
        "--power",
        default=None,
        metavar="NAME:PORT",
        help="measure energy per inference with a power monitor supplying the board: "
        "lpm01a:/dev/ttyACM1 (X-NUCLEO-LPM01A) or ppk2:/dev/ttyACM2 (Nordic PPK2), with --port "
        "and energy-mode MLPerf firmware (implies --mlperf)",
    )
    p.add_argument(
        "--supply-mv",
        type=supply_mv,
        default=3300,
        metavar="MV",
        help="with --power: the board's supply voltage in mV (default 3300)",
    )
    p.add_argument(
        "--save-trace",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --power: write the current trace as JSON, for `mcugen report --trace FILE`",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")


def cmd_measure(args: argparse.Namespace) -> int:
    target = target_for(args)
    if target.board.is_host:
        raise McugenError(
            "measure needs a Cortex-M board: the host board has no cycle counter or MLPerf port",
            hint="pick a board from `mcugen boards`, e.g. --board nucleo-f767 --emulate",
        )
    power = _power_spec(args, target)
    if args.save_trace is not None and power is None:
        raise McugenError("--save-trace needs a power monitor", hint="add --power NAME:PORT")
    require_location(target, args.port)
    if not (args.mlperf or power) and (args.count is not None or args.warmup is not None):
        raise McugenError("--count and --warmup apply to --mlperf runs", hint="add --mlperf")
    if not (args.mlperf or power) and target.mlperf_mode != "performance":
        raise McugenError("--mlperf-mode applies to --mlperf runs", hint="add --mlperf")
    if (args.mlperf or power) and args.estimate == "mix":
        raise McugenError(
            "--estimate mix applies to profiling runs", hint="drop --mlperf and --power"
        )
    mix_board = check_mix(args, target)
    if power is not None and target.mlperf_mode != "energy":
        target = with_mlperf_mode(target, "energy")  # the monitor needs the firmware's marks
    sample = inputs_for(args, load_for(args), 1)
    gen = generate_for(args, target)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mcugen-") as tmp:
        result = build(gen, target, Path(tmp) / "project")
        if power is not None:
            report = energy_report(args, gen, target, result, sample[0], power)
        elif args.mlperf:
            report = mlperf_report(args, gen, target, result, sample[0])
        else:
            report = device_report(gen, target, result, sample, args.port, True)
            if mix_board is not None:
                mix_report(gen, target, result.executable, sample[0], Path(tmp), mix_board, report)
            report.pop("_outputs")
            report["protocol"] = "mcugen"
            hz = QEMU_INSTRUCTIONS_PER_SECOND if target.emulate else target.board.clock_hz
            report["us_per_inference"] = report["per_inference"] * 1e6 / hz
    report["seconds"] = time.perf_counter() - start
    report["source"] = str(args.input) if args.input else f"random input (seed {args.seed})"
    report.setdefault("energy", None)
    report.setdefault("energy_note", energy_note(target))
    if args.json:
        print(json.dumps(report))
    else:
        _print_report(args, target, report)
    return 0 if report.get("agree", True) is not False else 1


def mlperf_report(
    args: argparse.Namespace,
    gen: Generated,
    target: Target,
    result: BuildResult,
    sample: list[np.ndarray],
) -> dict[str, Any]:
    """Run the MLPerf Tiny runner's exchange on the device; compare the results with TFLM."""
    from mcugen.firmware.sizes import firmware_sizes
    from mcugen.link.device_run import open_console
    from mcugen.link.mlperf import MlperfRunner

    data = _mlperf_input(gen, sample)
    expected_id = gen.view_model.mlperf_model_id
    port = None if target.emulate else args.port
    with open_console(target, result.executable, port) as (ser, name):
        runner = MlperfRunner(ser, name=name)
        if port is None:
            runner.boot()
        else:
            runner.resync()
        dut = runner.name_dut()
        profile, model_id = runner.profile()
        check_model_id(
            model_id,
            expected_id,
            name,
            f"write this model to the board first: mcugen flash {args.model} "
            f"--board {target.board.name}",
        )
        count, warmup = infer_counts(args, model_id, target.emulate)
        runner.load(data)
        timing = runner.infer(count, warmup)
        _check_mode(runner.mode, target, name, args)
        values = runner.results()
    report: dict[str, Any] = {
        "board": target.board.name,
        "emulated": target.emulate,
        "protocol": "mlperf-tiny",
        "dut": dut,
        "profile": profile,
        "model_id": model_id,
        "timestamp_mode": runner.mode or "unknown",
        "count": timing.count,
        "warmup": timing.warmup,
        "lap_us": list(timing.lap_us) if timing.lap_us is not None else None,
        "us_per_inference": timing.us_per_inference if timing.lap_us is not None else None,
        "arena_bytes": gen.plan.arena_bytes,
        "sizes": asdict(firmware_sizes(result.executable, target)),
        "results": values,
    }
    if timing.lap_us is None:
        pass  # energy mode: the timestamps went to the power monitor
    elif target.emulate:
        per_us = QEMU_INSTRUCTIONS_PER_SECOND / 1e6
        report["instructions_per_inference"] = round(timing.us_per_inference * per_us)
        report["per_inference"] = report["instructions_per_inference"]
        report.update(energy_estimate(target, report))
    else:
        report["cycles_per_inference"] = round(
            timing.us_per_inference * target.board.clock_hz / 1e6
        )
    report.update(_tflm_comparison(gen, sample, values))
    return report


def _check_mode(mode: str, target: Target, name: str, args: argparse.Namespace) -> None:
    """The device's timestamp mode (its banner, or its laps) must be the one asked for."""
    if mode == target.mlperf_mode:
        return
    raise RunError(
        f"the firmware on the device runs MLPerf Tiny's {mode or 'unknown'} timestamp mode, "
        f"this run asked for {target.mlperf_mode}",
        where=name,
        hint=f"write that firmware to the board first: mcugen flash {args.model} --board "
        f"{target.board.name} --mlperf-mode {target.mlperf_mode}",
    )


def _mlperf_input(gen: Generated, sample: list[np.ndarray]) -> bytes:
    """The bytes `db` loads: the model's one input."""
    graph = gen.graph
    if len(graph.inputs) != 1:
        raise UnsupportedError(
            f"the MLPerf Tiny protocol loads one input; the model has {len(graph.inputs)}",
            hint="measure it without --mlperf",
        )
    t_in = graph.tensors[graph.inputs[0]]
    return np.ascontiguousarray(sample[0], dtype=DTYPES[t_in.dtype][0]).tobytes()


def _power_spec(args: argparse.Namespace, target: Target) -> PowerSpec | None:
    """The monitor of --power, which measures a real board on --port only."""
    if not args.power:
        return None
    spec = parse_power_spec(args.power)
    if not args.port:
        raise McugenError(
            "a power monitor measures a real board; under --emulate mcugen prints an estimate",
            hint="drop --power, or run the board on its console with --port /dev/ttyACM0",
        )
    if "://" not in spec.port and not Path(spec.port).exists():
        raise McugenError(
            "power monitor port not found",
            where=spec.port,
            hint="plug the monitor in and check the name (ls /dev/ttyACM*)",
        )
    return spec


def energy_report(
    args: argparse.Namespace,
    gen: Generated,
    target: Target,
    result: BuildResult,
    sample: list[np.ndarray],
    power: PowerSpec,
) -> dict[str, Any]:
    """The runner's exchange in energy mode with a power monitor supplying the board."""
    from mcugen.firmware.sizes import firmware_sizes
    from mcugen.link.power.bench import EnergyRequest, run_energy

    request = EnergyRequest(
        _mlperf_input(gen, sample),
        gen.view_model.mlperf_model_id,
        args.count,
        args.warmup,
        millivolts=args.supply_mv,
    )
    run = run_energy(power, args.port, request)
    if args.save_trace is not None and run.trace is not None:
        from mcugen.link.power.bench import trace_json
        from mcugen.outputs import write_file

        write_file(args.save_trace, trace_json(run.trace))
    energy = run.energy
    us = energy.mean_s * 1e6
    report: dict[str, Any] = {
        "board": target.board.name,
        "emulated": False,
        "protocol": "mlperf-tiny",
        "dut": run.dut,
        "profile": run.profile,
        "model_id": run.model_id,
        "timestamp_mode": run.mode,
        "count": run.count,
        "warmup": run.warmup,
        "rounds": run.rounds,
        "us_per_inference": us,
        "cycles_per_inference": round(us * target.board.clock_hz / 1e6),
        "arena_bytes": gen.plan.arena_bytes,
        "sizes": asdict(firmware_sizes(result.executable, target)),
        "results": run.results,
        "energy": {**energy.as_dict(), "monitor": run.monitor},
        "energy_note": f"measured by {run.monitor} between the firmware's GPIO marks",
    }
    report.update(_tflm_comparison(gen, sample, run.results))
    return report


def _tflm_comparison(
    gen: Generated, sample: list[np.ndarray], values: list[float]
) -> dict[str, Any]:
    from mcugen.reference import tflm_outputs

    model = reference_flatbuffer(gen.source)
    try:
        reference = dequantized(gen.graph, tflm_outputs(model, gen.graph, [sample])[0][0])
    except McugenError as err:  # tflite-micro is a test extra, not a dependency
        return {"tflm": None, "agree": None, "comparison_note": f"not compared: {err.line()}"}
    agreement = compare_results(values, reference)
    return {
        "tflm": [round(float(v), RESULT_DECIMALS) for v in reference],
        "agree": agreement.agree,
        "max_abs_diff": agreement.max_abs_diff,
        "first_difference": agreement.first_difference,
        "comparison_note": agreement.note,
    }


def _print_report(args: argparse.Namespace, target: Target, r: dict[str, Any]) -> None:
    how = "the MLPerf Tiny runner protocol" if r["protocol"] == "mlperf-tiny" else "profiling"
    print(
        f"mcugen: measured {args.model} on {target.label} with {how}, {r['source']}, "
        f"in {r['seconds']:.2f} s"
    )
    if r["protocol"] == "mlperf-tiny":
        print_mlperf(target, r)
    else:
        clock = (
            "of QEMU virtual time" if r["emulated"] else f"at {target.board.clock_hz / 1e6:.0f} MHz"
        )
        print(f"  latency: {r['us_per_inference']:,.1f} us {clock} per inference")
        print_device_figures(r)
        print_operator_table(r)
    print_estimate(r)
    if r.get("energy"):
        print_energy(r["energy"], r["rounds"])
    else:
        print(f"  energy: {r['energy_note']}")
