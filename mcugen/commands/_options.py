"""The options several commands share (the model and its planning, the device, MLPerf Tiny, the
partition over boards, training) and the argument types that give one-line errors. Each command
declares its own arguments next to its handler (commands/<name>.py `arguments`) from these."""

from __future__ import annotations

import argparse
from pathlib import Path

from mcugen.boards import MLPERF_MODES
from mcugen.codegen.lower._variants import KERNEL_CHOICES
from mcugen.model import numerics
from mcugen.options import KEEP_INPUT
from mcugen.plan import dynamic, paging, patches, pools, state_memory
from mcugen.plan import layout as layouts
from mcugen.plan import order as orders
from mcugen.plan import partition as partitions
from mcugen.plan.paging.target import OBJECTIVES
from mcugen.plan.weight_staging import STAGE_CHOICES


def plan_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--chart", type=Path, default=None, help="write a memory-over-time chart (.png or .svg)"
    )
    p.add_argument(
        "--strategies",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compare every registered order and layout strategy (default: on)",
    )


def partition_options(p: argparse.ArgumentParser) -> None:
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
        type=baud,
        default=115200,
        help="with --boards: the links' UART baud rate, 8N1 (default 115200)",
    )
    p.add_argument(
        "--partition-work",
        type=rate,
        default=None,
        metavar="UNITS",
        help="with --boards --partition cpsat: CP-SAT work units (deterministic; default 1)",
    )
    p.add_argument(
        "--links",
        choices=("uart", "host"),
        default="uart",
        help="with --boards --emulate: tensors between boards go board to board over link UARTs "
        "(default), or through the host",
    )


def baud(text: str) -> int:
    return int(number(text, int, 300, 100_000_000))


def training_options(p: argparse.ArgumentParser, *, trainable: str | None) -> None:
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
    p.add_argument("--lr", type=rate, default=0.01, help="learning rate (default 0.01)")
    p.add_argument("--momentum", type=rate, default=0.0, help="SGD momentum, below 1")
    p.add_argument("--weight-decay", type=rate, default=0.0, help="L2 weight decay")
    p.add_argument(
        "--accumulate",
        type=positive,
        default=1,
        help="samples whose gradients are averaged per update (batch 1, default 1)",
    )


def schedule_options(p: argparse.ArgumentParser) -> None:
    """How a training step is scheduled under --ram-budget (`mcugen train`, and `mcugen plan
    --trainable`, which plans what train builds): the same flags and defaults in both."""
    p.add_argument(
        "--scheduler",
        default="poet",
        metavar="NAME",
        help="with --ram-budget, what to keep, recompute or page: store_all, greedy, remat, "
        "paging, poet (default: the exact model with both)",
    )
    p.add_argument(
        "--runtime-budget",
        type=positive,
        default=None,
        metavar="CYCLES",
        help="with --ram-budget: the most (estimated) cycles a step may take, recomputation and "
        "paging included",
    )
    p.add_argument(
        "--schedule-work",
        type=rate,
        default=10.0,
        metavar="UNITS",
        help="the scheduler's search budget in CP-SAT work units per schedule (deterministic; "
        "default 10)",
    )
    p.add_argument(
        "--schedule-gap",
        type=share,
        default=0.01,
        metavar="FRACTION",
        help="the scheduler stops at a schedule within FRACTION of its cost from the lower "
        "bound (default 0.01; 0: search for the optimum within the work)",
    )


def rate(text: str) -> float:
    return number(text, float, 0.0, 1e6)


def share(text: str) -> float:
    return number(text, float, 0.0, 1.0)


def mlperf_mode_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--mlperf-mode",
        choices=MLPERF_MODES,
        default=MLPERF_MODES[0],
        help="the firmware's MLPerf Tiny timestamp mode: performance (default: m-lap-us lines, "
        "115200 baud) or energy (a falling edge on the board's timestamp pin for a power "
        "monitor, 9600 baud)",
    )


def number(text: str, kind: type[int] | type[float], low: float, high: float) -> float:
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


def positive(text: str) -> int:
    return int(number(text, int, 1, 1_000_000))


def non_negative(text: str) -> int:
    return int(number(text, int, 0, 1_000_000))


def budget_seconds(text: str) -> float:
    return number(text, float, 0.0, 3600.0)


def patch_overhead(text: str) -> float | str:
    """A fraction of the model's MACs, or "auto" (the default's budget, only when needed)."""
    if text == "auto":
        return text
    try:
        return number(text, float, 0.0, 10.0)
    except argparse.ArgumentTypeError:
        what = f"{text!r} is neither auto nor a number between 0 and 10"
        raise argparse.ArgumentTypeError(what) from None


def ram_budget(text: str) -> int:
    return int(number(text, int, 16, 1 << 31))


def supply_mv(text: str) -> int:
    return int(number(text, int, 800, 5000))


def model_options(
    p: argparse.ArgumentParser,
    *,
    board: bool = True,
    emulate: bool = True,
    allocator: bool = True,
    with_pools: bool | None = None,
) -> None:
    """The model and its planning options; `with_pools` (default: with `board`) adds --pools."""
    p.add_argument(
        "model", type=Path, help="the .tflite model, or a quantized .onnx model (docs/onnx.md)"
    )
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
    p.add_argument(
        "--no-concat-in-place",
        action="store_true",
        help="no producer writes straight into its channel slice of a concatenation (default: "
        "where the arena does not grow)",
    )
    p.add_argument("--no-rewrite", action="store_true", help="no PAD fusion or depthwise split")
    p.add_argument(
        "--onnx-numerics",
        choices=numerics.CHOICES,
        default=None,
        help="an ONNX model's arithmetic: ort (default) onnxruntime's, bit-exact with it on an "
        "FPU; fixed TFLite's fixed-point requantisation, bit-exact with TFLM (docs/onnx.md); "
        "refused for a .tflite model",
    )
    p.add_argument(
        "--patch-overhead",
        type=patch_overhead,
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
        type=budget_seconds,
        default=None,
        metavar="S",
        help="planning search budget in nominal seconds of work, 0 to 3600 (default: 0.5 for "
        "the order search); counted in work, so the same budget gives the same plan on any "
        "machine and load",
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
        type=ram_budget,
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
        "--keep-input",
        default=None,
        choices=KEEP_INPUT,
        help="whether the input stays intact in the arena through the inference: yes; no (the "
        "operators may write over it; a board's runner keeps its own copy beside the arena); "
        "auto (default on a board: whichever needs less RAM). A library (export) and the host "
        "default to no",
    )
    p.add_argument(
        "--kernels",
        default="auto",
        choices=KERNEL_CHOICES,
        help="auto (default): as memory where the plan does not fit the --board's RAM, "
        "elsewhere as memory when its kernels cost little (at most 10 %% more instructions, "
        "estimated), else as opt; opt: every layer its fastest kernel, "
        "whatever its scratch; memory: the fastest kernels that keep the arena at or below the "
        "reference kernels', the layers at the peak given a kernel with less scratch (slower: "
        "the plan lists them); reference: TFLM's reference kernels only",
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


def quantize_input_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--quantize-input",
        action="store_true",
        help="quantize a float --input for a quantized model with the input's scale and zero "
        "point (without it, any array of another dtype or shape than the model's is refused)",
    )


def device_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", default=None, help="serial port of a real board, e.g. /dev/ttyACM0")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")


def estimate_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--estimate",
        choices=("cpi", "mix"),
        default="cpi",
        help="with --emulate: the board's time from the twin's instructions at the board's "
        "calibrated cycles per instruction (cpi, default), or also from the executed "
        "instruction mix, per operator with --profile (mix: one more twin run under a QEMU "
        "plugin built with the host cc)",
    )
