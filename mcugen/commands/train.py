"""`mcugen train`: fine-tune a model's last layers on the host, a board or its QEMU twin.

The training graph (mcugen/train/) is planned and built like any model; every sample is one
invoke (the host build runs them in one process, a board takes them over the serial protocol),
and the trained weights come back as the model state (the host's state file, READ_STATE). The
tuned model is written only after the run succeeded."""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcugen.commands._common import load_for, plan_options, require_location, target_for
from mcugen.commands._options import (
    device_options,
    model_options,
    positive,
    schedule_options,
    training_options,
)
from mcugen.commands._training import (
    fast_arena,
    paging_report,
    plan_within_budget,
    schedule_report,
    state_report,
)
from mcugen.errors import McugenError
from mcugen.firmware.compile import build
from mcugen.firmware.sizes import firmware_sizes
from mcugen.link.train_run import (
    TrainRun,
    train_on_device,
    train_on_host,
)
from mcugen.model.tflite_write import write_model
from mcugen.outputs import write_file
from mcugen.report.training import print_training
from mcugen.train.dataset import check_dataset, load_dataset
from mcugen.train.export import float_model, requantized_model
from mcugen.train.graph import TrainingGraph, build_training_graph
from mcugen.train.metrics import EpochFigures, check_trained, epoch_figures
from mcugen.train.options import TrainOptions
from mcugen.train.steps import Dataset, Segment, held_out_every_epoch, run_segments


def train_options(args: argparse.Namespace) -> TrainOptions:
    """The training options of `mcugen train` and `mcugen plan --trainable`."""
    return TrainOptions(
        trainable=args.trainable,
        loss=args.loss,
        learning_rate=args.lr,
        momentum=args.momentum,
        weight_decay=args.weight_decay,
        accumulate=args.accumulate,
    )


HELP = "fine-tune a model on the host, a board or its twin, write the tuned model"
#: What it writes, checked before any work (cli.check_outputs, mcugen/outputs.py).
OUTPUTS: tuple[tuple[str, str], ...] = (("output", "file"),)


def arguments(p: argparse.ArgumentParser) -> None:
    model_options(p)
    device_options(p)
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
    p.add_argument("--epochs", type=positive, default=1, help="passes over the data (default 1)")
    training_options(p, trainable="last:1")
    schedule_options(p)
    p.add_argument(
        "--checkpoint-every",
        type=positive,
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


def cmd_train(args: argparse.Namespace) -> int:
    target = target_for(args)
    require_location(target, args.port)
    checkpoints = args.checkpoint_every is not None or args.resume
    if checkpoints and target.board.is_host:
        raise McugenError(
            "checkpoints live in a board's store; the host build has none",
            hint="train on a board or its twin (--board nucleo-f767 --emulate)",
        )
    if args.checkpoint_dir is not None and not (target.emulate and args.checkpoint_dir.is_dir()):
        raise McugenError(
            "--checkpoint-dir needs --emulate and an existing directory",
            where=str(args.checkpoint_dir),
        )
    tg, segments, held_out = _checked_run(args)
    planning = replace(
        plan_options(args, firmware=not target.board.is_host, target=target), rewrites=False
    )
    gen, scheduled, unit = plan_within_budget(args, tg, planning, target)
    with tempfile.TemporaryDirectory(prefix="mcugen-train-") as tmp:
        result = build(gen, target, Path(tmp) / "project")
        linked = None if target.board.is_host else firmware_sizes(result.executable, target)
        if target.board.is_host:
            run = train_on_host(gen, result.executable, segments)
        else:
            run = train_on_device(
                gen,
                target,
                result.executable,
                args.port,
                segments,
                checkpoint_every=args.checkpoint_every or 0,
                resume=args.resume,
                storage=args.checkpoint_dir or Path.cwd(),
            )
    check_trained(tg, run.state)
    if args.output is not None:
        tuned = requantized_model(tg, run.state) if args.requantize else float_model(tg, run.state)
        write_file(args.output, write_model(tuned))
    report = _report(args, tg, fast_arena(gen), gen.view_model.state_bytes, run)
    report["held_out"] = _held_out_report(args, tg, held_out)
    report["schedule"] = schedule_report(args, scheduled, unit)
    report["paging"] = paging_report(gen)
    report["state"] = state_report(gen, target, linked)
    if args.json:
        print(json.dumps(report))
    else:
        print_training(report)
    return 0


def _checked_run(args: argparse.Namespace) -> tuple[TrainingGraph, list[Segment], Dataset | None]:
    """The training graph and the run's invokes, from data checked against it (mcugen/train/
    dataset.py) before anything is planned or built; the held-out data (--val-data) too."""
    data = load_dataset(args.data)
    held_out = load_dataset(args.val_data) if args.val_data is not None else None
    tg = build_training_graph(load_for(args), train_options(args))
    check_dataset(tg, data, where=str(args.data))
    if held_out is not None:
        check_dataset(tg, held_out, where=str(args.val_data), held_out=True)
    sources = (str(args.data), str(args.val_data or ""))
    return tg, run_segments(tg, data, args.epochs, held_out, sources=sources), held_out


def _report(
    args: argparse.Namespace, tg: TrainingGraph, arena: int, state: int, run: TrainRun
) -> dict[str, Any]:
    figures = epoch_figures(run.segments)
    return {
        "model": str(args.model),
        "board": args.board,
        "emulated": bool(getattr(args, "emulate", False)),
        "trainable": [
            {"operator": i, "opcode": tg.model.operators[i].opcode} for i in tg.trainable
        ],
        "float_operators": list(tg.float_ops),
        "loss_function": tg.loss,
        "steps": len(run.losses),
        "loss": run.losses,
        "epoch_loss": [f.loss for f in figures],
        "epochs": [{"epoch": f.epoch} | _figures(f) for f in figures],
        "final": _figures(figures[-1]),
        "unit": run.unit,
        "per_step": list(run.per_step),
        "arena_bytes": arena,
        "state_bytes": state,
        "stack_used": run.stack_used,
        "stack_bytes": run.stack_bytes,
        "seconds": run.seconds,
        "output": str(args.output) if args.output else None,
        "requantized": bool(args.requantize),
    }


def _figures(f: EpochFigures) -> dict[str, float | None]:
    return {
        "loss": f.loss,
        "accuracy": f.accuracy,
        "held_out_loss": f.held_out_loss,
        "held_out_accuracy": f.held_out_accuracy,
    }


def _held_out_report(
    args: argparse.Namespace, tg: TrainingGraph, held_out: Dataset | None
) -> dict[str, Any] | None:
    if held_out is None:
        return None
    return {
        "data": str(args.val_data),
        "samples": int(held_out.x.shape[0]),
        "every_epoch": held_out_every_epoch(tg),
    }
