"""Fine-tuning the MLPerf Tiny models on a board's QEMU twin: instructions per training step,
arena, model state and stack, next to a store-all baseline.

For each model and trainable choice, builds the training graph (mcugen/train/), plans it as
mcugen does (the best order, layout and in-place sharing the planner finds for forward
activations kept for the backward pass, gradients and scratch) and as the plain store-all
schedule the POET issue starts from (the stored order: every forward operator, then the loss,
then the backward operators in reverse; TFLM's greedy-by-size layout; nothing shared), runs
three steps of a seeded synthetic dataset on the twin (`-icount shift=0`) and prints one row.
"state" is the variables outside the arena: trained weights, gradient sums and momentum; "RAM" is
everything the board's RAM holds (arena, state, stack, runtime and the runner's copy of the input
unless the plan keeps the input in the arena: mcugen/plan/fit.py), against its size.
Run: python benchmarks/training.py [--board B] [--momentum M] [--accumulate N] [MODEL:TRAINABLE...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from mcugen.boards import load_board, resolve_target
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.firmware.fits import target_fit
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.model.tflite_import import load_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan import dynamic
from mcugen.plan.fit import weight_bytes
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from mcugen.train.steps import Dataset, steps

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
DEFAULT = [
    "mlperf_kws_dscnn_int8:last:1",
    "mlperf_kws_dscnn_int8:last:3",
    "mlperf_ic_resnet8_int8:last:1",
    "mlperf_ic_resnet8_int8:last:4",
    "mlperf_vww_mbv1_int8:last:1",
    "mlperf_vww_mbv1_int8:25,29",
    "mlperf_vww_mbv1_int8:last:3",
    "mlperf_ad_toycar_int8:last:1",
]


def dataset(model_path: Path, samples: int) -> Dataset:
    graph = load_model(model_path)
    x = np.stack([random_inputs(graph, s)[0][0] for s in range(samples)])
    out = graph.tensors[graph.outputs[0]]
    if graph.operators[-1].opcode == "SOFTMAX":
        return Dataset(x, np.arange(samples) % out.shape[-1])
    q = graph.tensors[graph.inputs[0]].quant
    scale, zp = (q.scale, q.zero_point) if q is not None else (1.0, 0)
    return Dataset(x, ((x.astype(np.float32) - zp) * scale).reshape(samples, *out.shape[1:]))


def row(spec: str, board: str, options: TrainOptions, workdir: Path) -> list[str]:
    stem, trainable = spec.split(":", 1)
    path = SHARED / f"{stem}.tflite"
    tg = build_training_graph(
        load_model(path), TrainOptions(**{**options.__dict__, "trainable": trainable})
    )
    target = resolve_target(load_board(board), emulate=True)
    core = target.port_board.core
    # as `mcugen train` plans it (mcugen/commands/train.py)
    gen = generate(tg.graph, options=PlanOptions(rewrites=False, core=core, keep_input="auto"))
    store_all = generate(
        tg.graph,
        options=PlanOptions(
            rewrites=False, core=core, order="stored", layout="greedy_by_size", in_place=False
        ),
    )
    result = build(gen, target, workdir / spec.replace(":", "_"))
    run_steps = steps(tg, dataset(path, 3), 1)
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, run_steps, emulated=True)
    per_step = [run.instructions(t) for t in run.ticks_per_inference]

    def ram(g: Generated) -> str:
        fit = target_fit(g.graph, g.plan, dynamic.STATIC, weight_bytes(g.graph), target)
        return f"{fit.ram_need:,}"

    return [
        stem.replace("mlperf_", "").replace("_int8", ""),
        trainable,
        str(len(tg.float_ops)),
        f"{sum(tg.graph.tensors[p.tensor].num_elements for p in tg.params):,}",
        f"{gen.view_model.state_bytes:,}",
        f"{gen.view_model.arena_bytes:,}",
        ram(gen),
        f"{store_all.view_model.arena_bytes:,}",
        ram(store_all),
        f"{max(per_step):,}",
        f"{run.stack_used:,}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", default=DEFAULT)
    parser.add_argument("--board", default="nucleo-f767")
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--accumulate", type=int, default=1)
    args = parser.parse_args(argv)
    if not SHARED.is_dir():
        print(f"needs the shared models in {SHARED}", file=sys.stderr)
        return 2
    options = TrainOptions(momentum=args.momentum, accumulate=args.accumulate)
    size = resolve_target(load_board(args.board), emulate=True).ram.size
    print(
        f"board: {args.board} (QEMU twin, RAM {size:,} B); SGD momentum {args.momentum}, "
        f"{args.accumulate} samples per update; instructions of the slowest of 3 steps"
    )
    head = [
        "model",
        "trainable",
        "float ops",
        "parameters",
        "state B",
        "arena B",
        "RAM B",
        "store-all arena B",
        "store-all RAM B",
        "instr./step",
        "stack B",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    with tempfile.TemporaryDirectory(prefix="mcugen-train-bench-") as tmp:
        for spec in args.specs:
            try:
                cells = row(spec, args.board, options, Path(tmp))
            except McugenError as exc:
                cells = [spec, "", exc.line()]
            print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
