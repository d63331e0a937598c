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

import numpy as np

from mcugen.commands._common import plan_options, require_location, target_for
from mcugen.errors import McugenError
from mcugen.host.project import build
from mcugen.host.train_run import TrainRun, train_on_device, train_on_host
from mcugen.io import write_atomic
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.pipeline import generate
from mcugen.train.export import float_model, requantized_model
from mcugen.train.graph import TrainingGraph, build_training_graph
from mcugen.train.options import TrainOptions
from mcugen.train.steps import Dataset, check_dataset, steps


def load_dataset(path: Path) -> Dataset:
    """x and y from an .npz, or one error line saying what is missing."""
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [k for k in ("x", "y") if k not in data.files]
            if missing:
                raise McugenError(
                    f"the dataset has no {' or '.join(missing)}",
                    where=str(path),
                    hint="save it with numpy.savez(path, x=samples, y=labels)",
                )
            return Dataset(np.asarray(data["x"]), np.asarray(data["y"]))
    except FileNotFoundError:
        raise McugenError("dataset file not found", where=str(path)) from None
    except (OSError, ValueError) as exc:
        raise McugenError(
            f"not a readable .npz ({exc})", where=str(path), hint="numpy.savez(path, x=..., y=...)"
        ) from None


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
    tg = build_training_graph(load_model(args.model), train_options(args))
    data = load_dataset(args.data)
    check_dataset(tg, data, where=str(args.data))
    planning = replace(
        plan_options(args, firmware=not target.board.is_host, target=target), rewrites=False
    )
    gen = generate(tg.graph, options=planning)
    run_steps = steps(tg, data, args.epochs)
    with tempfile.TemporaryDirectory(prefix="mcugen-train-") as tmp:
        result = build(gen, target, Path(tmp) / "project")
        if target.board.is_host:
            run = train_on_host(gen, result.executable, run_steps)
        else:
            run = train_on_device(
                gen,
                target,
                result.executable,
                args.port,
                run_steps,
                checkpoint_every=args.checkpoint_every or 0,
                resume=args.resume,
                storage=args.checkpoint_dir or Path.cwd(),
            )
    if args.output is not None:
        tuned = requantized_model(tg, run.state) if args.requantize else float_model(tg, run.state)
        write_atomic(args.output, write_model(tuned))
    report = _report(args, tg, gen.view_model.arena_bytes, gen.view_model.state_bytes, run)
    if args.json:
        print(json.dumps(report))
    else:
        _print(report)
    return 0


def _report(
    args: argparse.Namespace, tg: TrainingGraph, arena: int, state: int, run: TrainRun
) -> dict[str, Any]:
    samples = len(run.losses) // args.epochs
    epochs = [run.losses[e * samples : (e + 1) * samples] for e in range(args.epochs)]
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
        "epoch_loss": [float(np.mean(e)) for e in epochs],
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


def _print(r: dict[str, Any]) -> None:
    ops = ", ".join(f"{t['operator']} ({t['opcode']})" for t in r["trainable"])
    where = r["board"] + (" (QEMU twin)" if r["emulated"] else "")
    print(
        f"mcugen: trained operators {ops} of {r['model']} on {where}: {r['steps']} steps, "
        f"{r['loss_function'].replace('_', '-')} loss, in {r['seconds']:.2f} s"
    )
    for k, mean in enumerate(r["epoch_loss"]):
        print(f"  epoch {k + 1}: mean loss {mean:.6g}")
    print(f"  loss of the first and last step: {r['loss'][0]:.6g}, {r['loss'][-1]:.6g}")
    if r["per_step"]:
        low, high = min(r["per_step"]), max(r["per_step"])
        span = f"{low:,}" if low == high else f"{low:,} to {high:,}"
        print(f"  per step: {span} {r['unit']}")
    print(
        f"  arena {r['arena_bytes']:,} bytes; state {r['state_bytes']:,} bytes (weights, "
        "gradient sums, momentum)"
        + (f"; stack used {r['stack_used']:,} of {r['stack_bytes']:,}" if r["stack_bytes"] else "")
    )
    if r["output"]:
        kind = "int8 throughout" if r["requantized"] else "its trained part in float32"
        print(f"  wrote {r['output']} ({kind})")
