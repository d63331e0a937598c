"""mcugen: fit and run TensorFlow Lite models on microcontrollers.

Command line: argument parsing only; sub-command NAME runs mcugen.commands.NAME.cmd_NAME.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from mcugen import __version__, progress
from mcugen.boards import MLPERF_MODES
from mcugen.codegen.lower._variants import KERNEL_CHOICES
from mcugen.errors import McugenError
from mcugen.link.flash import TOOLS as FLASH_TOOLS
from mcugen.plan import dynamic, paging, patches, pools, state_memory
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan import partition as partitions
from mcugen.plan.paging.target import OBJECTIVES
from mcugen.plan.weight_staging import STAGE_CHOICES


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    progress.configure(quiet=args.quiet)
    try:
        check_outputs(args)
        return int(command(args.command)(args))
    except McugenError as err:
        print(f"mcugen: error: {err.line()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("mcugen: interrupted; no partial output is left", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except Exception as exc:  # a bug: still one line unless asked for the traceback
        if os.environ.get("MCUGEN_DEBUG"):
            raise
        print(
            f"mcugen: internal error: {type(exc).__name__}: {exc}; this is a bug in mcugen, "
            "rerun with MCUGEN_DEBUG=1 for a traceback and report it",
            file=sys.stderr,
        )
        return 70


#: Every argument that names something a sub-command writes: (attribute, "file" or "folder").
#: They are checked before any work (mcugen/outputs.py): a user's files are never replaced.
OUTPUTS: dict[str, tuple[tuple[str, str], ...]] = {
    "build": (("output", "folder"),),
    "flash": (("output", "folder"),),
    "export": (("output", "folder"),),
    "run": (("output", "file"),),
    "optimize": (("output", "file"),),
    "train": (("output", "file"),),
    "report": (("output", "file"), ("json", "file")),
    "plan": (("chart", "file"), ("patch_chart", "file"), ("pareto_chart", "file")),
    "measure": (("save_trace", "file"),),
}


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output path mcugen may not write, or two outputs that name
    the same path."""
    from mcugen.outputs import check_output_dir, check_output_file

    seen: dict[Path, str] = {}
    for attr, kind in OUTPUTS.get(args.command, ()):
        path = getattr(args, attr, None)
        if not isinstance(path, Path):
            continue
        resolved = check_output_dir(path) if kind == "folder" else check_output_file(path)
        flag = "--" + attr.replace("_", "-")
        if resolved in seen:
            raise McugenError(f"{seen[resolved]} and {flag} name the same file", where=str(path))
        seen[resolved] = flag


def command(name: str) -> Callable[[argparse.Namespace], int]:
    """The function that runs sub-command `name`: `mcugen.commands.<name>.cmd_<name>`, imported
    only for the sub-command that runs."""
    module = importlib.import_module(f"mcugen.commands.{name}")
    run: Callable[[argparse.Namespace], int] = getattr(module, f"cmd_{name}")
    return run


class _Parser(argparse.ArgumentParser):
    """argparse with mcugen's one error line: what is wrong and where to look, no usage block
    (sub-command parsers are made of the same class)."""

    def error(self, message: str) -> NoReturn:
        line = McugenError(message, hint=f"`{self.prog} --help` lists the options").line()
        self.exit(2, f"mcugen: error: {line}\n")


def _parser() -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = _Parser(prog="mcugen", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"mcugen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    plan = sub.add_parser("plan", help="plan the arena of a model and report it")
    _model_options(plan, board=False, with_pools=True)
    plan.add_argument(
        "--board",
        default=None,
        help="also say whether arena and weights fit this board (exit 3 if not)",
    )
    plan.add_argument(
        "--emulate",
        action="store_true",
        help="with --board: the verdict for the board's QEMU twin, as build/run --emulate build",
    )
    plan.add_argument("--json", action="store_true", help="print one JSON object")
    _training_options(plan, trainable=None)
    plan.add_argument(
        "--pareto",
        type=_positive,
        default=None,
        metavar="POINTS",
        help="with --trainable: the cost of a training step against the RAM budget, at POINTS "
        "budgets from the store-all peak down, for the poet, remat and paging schedulers",
    )
    plan.add_argument(
        "--pareto-chart", type=Path, default=None, help="with --pareto: draw it (*.png or *.svg)"
    )
    plan.add_argument(
        "--patch-curve",
        action="store_true",
        help="also plan the model at MAC budgets from 0 to 50 %% and print the arena each "
        "patch stage reaches (slow: one plan per budget)",
    )
    plan.add_argument(
        "--patch-chart",
        type=Path,
        default=None,
        help="draw the --patch-curve (*.png or *.svg); implies --patch-curve",
    )
    plan.add_argument(
        "--schedule-work",
        type=_rate,
        default=2.0,
        metavar="UNITS",
        help="with --pareto: CP-SAT work units per schedule (default 2)",
    )
    plan.add_argument(
        "--schedule-gap",
        type=_share,
        default=0.01,
        metavar="FRACTION",
        help="with --pareto: a schedule within FRACTION of its cost from the lower bound is "
        "good enough (default 0.01; 0: search for the optimum within the work)",
    )
    plan.add_argument(
        "--timings",
        action="store_true",
        help="add planning times to the JSON (without them it is byte-identical from run to run)",
    )
    _plan_report_options(plan)
    _partition_options(plan)

    build = sub.add_parser("build", help="generate C and compile it for a board")
    _model_options(build)
    _mlperf_mode_option(build)
    build.add_argument("-o", "--output", type=Path, default=None, help="project directory")

    run = sub.add_parser("run", help="build, run on the board or its emulator, print outputs")
    _model_options(run)
    _device_options(run)
    run.add_argument("--input", type=Path, default=None, help=".npy (one input) or .npz")
    _quantize_input_option(run)
    run.add_argument("--output", type=Path, default=None, help="write outputs (.npy or .npz)")
    run.add_argument("--profile", action="store_true", help="per-operator instructions or cycles")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    _partition_options(run)
    run.add_argument(
        "--links",
        choices=("uart", "host"),
        default="uart",
        help="with --boards: tensors between boards go board to board over link UARTs "
        "(default), or through the host",
    )

    verify = sub.add_parser("verify", help="compare device outputs with TFLM's interpreter")
    _model_options(verify)
    _device_options(verify)
    verify.add_argument(
        "--samples", type=_positive, default=5, help="seeded random inputs to compare (1 or more)"
    )
    verify.add_argument(
        "--input", type=Path, default=None, help="compare on this sample (.npy, or .npz)"
    )
    verify.add_argument(
        "--input-dir",
        type=Path,
        default=None,
        help="compare on every sample in this folder (*.npy or *.npz, one sample a file)",
    )
    _quantize_input_option(verify)
    verify.add_argument("--json", action="store_true", help="print one JSON object")

    _optimize_parser(sub)
    _measure_parser(sub)
    _report_parser(sub)
    _flash_parser(sub)
    _export_parser(sub)
    _train_parser(sub)

    boards = sub.add_parser("boards", help="list the boards and their limits")
    boards.add_argument(
        "board", nargs="?", help="one board: its memories, what they cost and where that is from"
    )
    ops = sub.add_parser("ops", help="list the operators mcugen runs and their kernels")
    ops.add_argument("operator", nargs="?", help="one operator: its optimised kernels in full")
    ops.add_argument("--json", action="store_true", help="print one JSON array")
    for each in sub.choices.values():
        each.add_argument(
            "-q", "--quiet", action="store_true", help="no progress line on the terminal"
        )
    return p


def _plan_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--chart", type=Path, default=None, help="write a memory-over-time chart (.png or .svg)"
    )
    p.add_argument(
        "--strategies",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compare every registered order and layout strategy (default: on)",
    )


def _partition_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--boards",
        default=None,
        metavar="A,B,...",
        help="spread the model over these boards (one entry per board, e.g. "
        "nucleo-f767,nucleo-f767) and report the partition: per board, per link, end to end",
    )
    p.add_argument(
        "--partition",
        default=None,
        help=f"with --boards: the partitioner, one of {', '.join(partitions.PARTITIONERS.names())} "
        f"(default {partitions.DEFAULT})",
    )
    p.add_argument(
        "--baud",
        type=_baud,
        default=115200,
        help="with --boards: the links' UART baud rate, 8N1 (default 115200)",
    )
    p.add_argument(
        "--partition-work",
        type=_rate,
        default=None,
        metavar="UNITS",
        help="with --boards --partition cpsat: CP-SAT work units (deterministic; default 1)",
    )


def _baud(text: str) -> int:
    return int(_number(text, int, 300, 100_000_000))


def _optimize_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "optimize", help="write the model in mcugen's order with its offsets for stock TFLM"
    )
    _model_options(p, board=False, allocator=False)
    p.add_argument("-o", "--output", type=Path, required=True, help="the optimized .tflite")
    p.add_argument(
        "--reshape-views",
        action="store_true",
        help="let RESHAPE outputs share their input's memory (TFLM's RESHAPE skips the copy)",
    )
    p.add_argument(
        "--measure", action="store_true", help="measure TFLM's head before and after (tflite_micro)"
    )


def _measure_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("measure", help="latency, operators and memory on a board or its QEMU twin")
    _model_options(p)
    _device_options(p)
    p.add_argument("--input", type=Path, default=None, help="the input (.npy or .npz)")
    _quantize_input_option(p)
    p.add_argument(
        "--mlperf",
        action="store_true",
        help="drive the firmware as the MLPerf Tiny (EEMBC EnergyRunner) runner does",
    )
    _mlperf_mode_option(p)
    p.add_argument(
        "--count",
        type=_positive,
        default=None,
        help="timed inferences with --mlperf (default: the runner's figure, 3 under --emulate)",
    )
    p.add_argument(
        "--warmup", type=_non_negative, default=None, help="warm-up inferences with --mlperf"
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
        type=_supply_mv,
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


def _report_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report", help="one HTML page: fit, memory, timeline, operators, planners, current"
    )
    _model_options(p, board=False, with_pools=True)
    p.add_argument("--board", required=True, help="the board (see `mcugen boards`)")
    p.add_argument("-o", "--output", type=Path, required=True, help="the page (report.html)")
    p.add_argument(
        "--no-run",
        action="store_true",
        help="do not run the model on the board's QEMU twin (no per-operator figures)",
    )
    p.add_argument(
        "--trace",
        type=Path,
        default=None,
        metavar="FILE.json",
        help="a measured current trace to draw: rate_hz, amperes and marks (report_html/trace.py)",
    )
    p.add_argument(
        "--json", type=Path, default=None, metavar="FILE", help="also write the figures as JSON"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random input of the run")


def _train_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "train", help="fine-tune a model on the host, a board or its twin, write the tuned model"
    )
    _model_options(p)
    _device_options(p)
    p.add_argument(
        "--data", type=Path, required=True, help=".npz with x (samples) and y (labels or targets)"
    )
    p.add_argument(
        "--val-data",
        type=Path,
        default=None,
        metavar="FILE",
        help="held-out .npz like --data: its loss and accuracy after every epoch (after the "
        "last with --accumulate above 1)",
    )
    p.add_argument("--epochs", type=_positive, default=1, help="passes over the data (default 1)")
    _training_options(p, trainable="last:1")
    p.add_argument(
        "--scheduler",
        default="poet",
        metavar="NAME",
        help="with --ram-budget, what to keep, recompute or page: store_all, greedy, remat, "
        "paging, poet (default: the exact model with both)",
    )
    p.add_argument(
        "--runtime-budget",
        type=_positive,
        default=None,
        metavar="CYCLES",
        help="with --ram-budget: the most (estimated) cycles a step may take, recomputation and "
        "paging included",
    )
    p.add_argument(
        "--schedule-work",
        type=_rate,
        default=10.0,
        metavar="UNITS",
        help="the scheduler's search budget in CP-SAT work units (deterministic; default 10)",
    )
    p.add_argument(
        "--schedule-gap",
        type=_share,
        default=0.01,
        metavar="FRACTION",
        help="the scheduler stops at a schedule within FRACTION of its cost from the lower "
        "bound (default 0.01; 0: search for the optimum within the work)",
    )
    p.add_argument(
        "--checkpoint-every",
        type=_positive,
        default=None,
        metavar="STEPS",
        help="save the state in the board's checkpoint store every STEPS steps and at the end",
    )
    p.add_argument(
        "--resume", action="store_true", help="start from the board's newest valid checkpoint"
    )
    p.add_argument(
        "--checkpoint-dir",
        type=Path,
        default=None,
        help="with --emulate: where the twin keeps its checkpoint files (default: here)",
    )
    p.add_argument("-o", "--output", type=Path, default=None, help="write the tuned .tflite")
    p.add_argument(
        "--requantize",
        action="store_true",
        help="write the tuned model int8 throughout (default: its trained part in float32)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _training_options(p: argparse.ArgumentParser, *, trainable: str | None) -> None:
    """What the training graph is (`mcugen train`; `mcugen plan` plans that graph when
    --trainable is given)."""
    p.add_argument(
        "--trainable",
        default=trainable,
        help="last:K (the last K weighted operators), all, or operator indices such as 9,11"
        + (" (default last:1)" if trainable else "; plans the training graph of these layers"),
    )
    p.add_argument(
        "--loss",
        default="auto",
        help="cross_entropy, mse, or auto (cross-entropy when the model ends in SOFTMAX)",
    )
    p.add_argument("--lr", type=_rate, default=0.01, help="learning rate (default 0.01)")
    p.add_argument("--momentum", type=_rate, default=0.0, help="SGD momentum, below 1")
    p.add_argument("--weight-decay", type=_rate, default=0.0, help="L2 weight decay")
    p.add_argument(
        "--accumulate",
        type=_positive,
        default=1,
        help="samples whose gradients are averaged per update (batch 1, default 1)",
    )


def _rate(text: str) -> float:
    return _number(text, float, 0.0, 1e6)


def _share(text: str) -> float:
    return _number(text, float, 0.0, 1.0)


def _flash_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("flash", help="build for a real board and write it through its probe")
    _model_options(p, emulate=False)
    p.add_argument(
        "--probe",
        choices=FLASH_TOOLS,
        default=None,
        help="flash tool (default: the first installed of pyocd, the board's, st-flash, openocd)",
    )
    _mlperf_mode_option(p)
    p.add_argument("-o", "--output", type=Path, default=None, help="keep the project here")


def _export_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="the model as a C library for your own firmware")
    _model_options(p, board=False, with_pools=False)
    p.add_argument("-o", "--output", type=Path, required=True, help="new directory to write")
    p.add_argument(
        "--format",
        default="lib",
        metavar="NAME",
        help="lib (default: include/ and src/), cmake, platformio, zephyr or arduino",
    )
    p.add_argument("--name", default=None, help="the C prefix (default: from the model's name)")
    p.add_argument("--board", default=None, help="kernel variants for this board's core")
    p.add_argument("--cpu", default=None, help="kernel variants for this core, e.g. cortex-m7")
    p.add_argument(
        "--arena-section",
        default="",
        metavar="NAME",
        help="linker section of the built-in arena, e.g. .dtcm_bss (default: .bss)",
    )


def _mlperf_mode_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--mlperf-mode",
        choices=MLPERF_MODES,
        default=MLPERF_MODES[0],
        help="the firmware's MLPerf Tiny timestamp mode: performance (default: m-lap-us lines, "
        "115200 baud) or energy (a falling edge on the board's timestamp pin for a power "
        "monitor, 9600 baud)",
    )


def _number(text: str, kind: type[int] | type[float], low: float, high: float) -> float:
    """`text` as an int or float in [low, high], or argparse's one-line error saying so."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:  # also refuses nan
        bounds = " and ".join(
            f"{int(b):,}" if float(b).is_integer() else str(b) for b in (low, high)
        )
        raise argparse.ArgumentTypeError(f"{text!r} is not a number between {bounds}")
    return value


def _positive(text: str) -> int:
    return int(_number(text, int, 1, 1_000_000))


def _non_negative(text: str) -> int:
    return int(_number(text, int, 0, 1_000_000))


def _budget_seconds(text: str) -> float:
    return _number(text, float, 0.0, 3600.0)


def _patch_overhead(text: str) -> float | str:
    """A fraction of the model's MACs, or "auto" (the default's budget, only when needed)."""
    if text == "auto":
        return text
    try:
        return _number(text, float, 0.0, 10.0)
    except argparse.ArgumentTypeError:
        what = f"{text!r} is neither auto nor a number between 0 and 10"
        raise argparse.ArgumentTypeError(what) from None


def _ram_budget(text: str) -> int:
    return int(_number(text, int, 16, 1 << 31))


def _supply_mv(text: str) -> int:
    return int(_number(text, int, 800, 5000))


def _model_options(
    p: argparse.ArgumentParser,
    *,
    board: bool = True,
    emulate: bool = True,
    allocator: bool = True,
    with_pools: bool | None = None,
) -> None:
    """The model and its planning options; `with_pools` (default: with `board`) adds --pools."""
    p.add_argument("model", type=Path, help="the .tflite model")
    if board:
        p.add_argument(
            "--board", default=None, help="target board (see `mcugen boards`; default: host)"
        )
    if board and emulate:
        p.add_argument("--emulate", action="store_true", help="build for the board's QEMU twin")
    p.add_argument(
        "--order",
        default=orders.DEFAULT,
        metavar="NAME",
        help=f"operator order strategy: {', '.join(orders.ORDERS.names())} (default "
        f"{orders.DEFAULT}: the candidate whose arena is smallest)",
    )
    p.add_argument(
        "--layout",
        default=layouts.DEFAULT,
        metavar="NAME",
        help=f"arena layout strategy: {', '.join(layouts.LAYOUTS.names())} (default "
        f"{layouts.DEFAULT}; greedy_by_size is TFLM's)",
    )
    p.add_argument(
        "--no-inplace",
        action="store_true",
        help="no views, in-place operators or concatenation slices",
    )
    p.add_argument("--no-rewrite", action="store_true", help="no PAD fusion or depthwise split")
    p.add_argument(
        "--patch-overhead",
        type=_patch_overhead,
        default="auto",
        metavar="F",
        help="run a stage of early, high-resolution operators tile by tile when that makes the "
        "arena smaller, adding at most this fraction of the model's MACs (0 turns it off); "
        f"default auto: up to {patches.DEFAULT_OVERHEAD:g}, only when the model would not fit the "
        "--board's RAM otherwise and the board has no external memory to page to",
    )
    p.add_argument(
        "--patcher",
        default=patches.DEFAULT,
        metavar="NAME",
        help=f"patch-stage search: {', '.join(patches.PATCHERS.names())} (default "
        f"{patches.DEFAULT})",
    )
    p.add_argument(
        "--tflm-plan",
        action="store_true",
        help="TFLM's own plan: --order stored --layout greedy_by_size, nothing shared",
    )
    p.add_argument(
        "--time-budget",
        type=_budget_seconds,
        default=None,
        metavar="S",
        help="planning search budget in nominal seconds of work, 0 to 3600 (default 1); counted "
        "in work, so the same budget gives the same plan on any machine and load",
    )
    if board if with_pools is None else with_pools:
        p.add_argument(
            "--pools",
            default=pools.DEFAULT,
            metavar="NAME",
            help=f"pool assignment over the board's memories: {', '.join(pools.POOLS.names())} "
            f"(default {pools.DEFAULT}: fast_first's split of the hottest buffers into the "
            "fastest memory only when it needs no more RAM than one arena; static offsets only)",
        )
    p.add_argument(
        "--ram-budget",
        type=_ram_budget,
        default=None,
        metavar="BYTES",
        help="fast memory the arena may use; the rest of its buffers are paged to the board's "
        "slow memory between operators (default: page only when the arena does not fit the "
        "board's RAM and it has an external memory)",
    )
    p.add_argument(
        "--state-memory",
        default=state_memory.DEFAULT,
        choices=state_memory.STATE_MEMORIES,
        help="where the model state (variable tensors: a training graph's weights, sums and "
        "momenta) lives: ram, slow (the board's external RAM, e.g. SDRAM), or auto (default: "
        "the external RAM when the board has one and its RAM cannot hold the state)",
    )
    p.add_argument(
        "--kernels",
        default="opt",
        choices=KERNEL_CHOICES,
        help="opt (default): the optimised kernel variant where one takes the operator's shape, "
        "else the reference; reference: TFLM's reference kernels only",
    )
    p.add_argument(
        "--stage-weights",
        default="off",
        choices=STAGE_CHOICES,
        help="auto: copy the weights of operators that re-read them (convolutions over many "
        "pixels) from flash into arena bytes free at their step before they run, never growing "
        "the arena; off (default). The twins have no flash wait states: they show the copy's "
        "cost, never its gain",
    )
    p.add_argument(
        "--copies-only",
        action="store_true",
        help="paging: kernels never work on the slow memory; every operand is copied into fast "
        "memory before its operator (the budget must hold each operator's operands)",
    )
    p.add_argument(
        "--objective",
        default="cycles",
        choices=OBJECTIVES,
        help="what paging minimises: CPU cycles (default) or energy, when the board gives its "
        "memories' energy per byte",
    )
    p.add_argument(
        "--pager",
        default=paging.DEFAULT,
        metavar="NAME",
        help=f"paging schedule: {', '.join(paging.PAGERS.names())} (default {paging.DEFAULT}: "
        "the heuristic when it is provably optimal, else CP-SAT from it)",
    )
    if allocator:
        p.add_argument(
            "--allocator",
            default=dynamic.DEFAULT,
            metavar="NAME",
            help=f"{', '.join(dynamic.ALLOCATORS)}: static offsets (default), or buffers moved "
            "between operators to stay at the peak live bytes: compacting (at run time) or planned "
            "(moves computed by mcugen)",
        )


def _quantize_input_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--quantize-input",
        action="store_true",
        help="quantize a float --input for a quantized model with the input's scale and zero "
        "point (without it, any array of another dtype or shape than the model's is refused)",
    )


def _device_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", default=None, help="serial port of a real board, e.g. /dev/ttyACM0")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")


if __name__ == "__main__":
    sys.exit(main())
