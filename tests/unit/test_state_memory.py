"""Where the model state lives (mcugen/plan/state_memory.py): the placement decision, the plan and
the generated C that follow it, and the one-line errors of a board without external RAM."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.cli import main
from mcugen.errors import McugenError
from mcugen.firmware.fits import target_fit
from mcugen.firmware.project import link_regions
from mcugen.model.ir import Graph
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from mcugen.plan import dynamic
from mcugen.plan.state_memory import place_state
from mcugen.plan.target import MemoryTarget, TargetMemory, memory_target
from mcugen.train.graph import TrainingGraph, build_training_graph
from mcugen.train.options import TrainOptions
from support import int8_classifier, synthetic_dataset

SDRAM = TargetMemory("sdram", "SDRAM", 0xC000_0000, 8 << 20, 1.0, 1.0)
DISCO = MemoryTarget("disco", 327_680, 1 << 20, 8192, 1184, memories=(SDRAM,))
NO_SLOW = MemoryTarget("f767", 524_288, 2 << 20, 8192, 1184)


def test_auto_keeps_the_state_in_ram_while_it_fits_and_moves_it_when_not() -> None:
    assert place_state(0, 400_000, DISCO, "auto") == ""  # no state, nowhere to put it
    assert place_state(100_000, 227_680, DISCO, "auto") == ""  # exactly the RAM
    assert place_state(100_000, 227_681, DISCO, "auto") == "sdram"  # one byte over
    assert place_state(9 << 20, 10_000, DISCO, "auto") == ""  # the SDRAM cannot hold it either
    assert place_state(600_000, 10_000, NO_SLOW, "auto") == ""  # nowhere else: over


def test_ram_and_slow_force_the_placement() -> None:
    assert place_state(500_000, 10_000, DISCO, "ram") == ""
    assert place_state(16, 10_000, DISCO, "slow") == "sdram"
    with pytest.raises(ValueError, match="one of auto, ram, slow"):
        place_state(16, 10_000, DISCO, "flash")
    with pytest.raises(ValueError, match="one of auto, ram, slow"):
        PlanOptions(state_memory="flash")


def test_slow_without_an_external_ram_is_one_line_saying_what_to_do() -> None:
    forced = MemoryTarget("nucleo-f767", 524_288, 2 << 20, 8192, 1184)
    with pytest.raises(McugenError) as err:
        place_state(4096, 10_000, forced, "slow")
    line = err.value.line()
    assert "nucleo-f767 has no external RAM that holds the 4,096-byte model state" in line
    assert "--state-memory auto" in line and "\n" not in line


def training_graph(depth: int, hidden: int, momentum: float = 0.0) -> tuple[Graph, TrainingGraph]:
    model = int8_classifier(seed=2, depth=depth, hidden=hidden)
    return model, build_training_graph(model, TrainOptions(trainable="last:2", momentum=momentum))


def test_the_plan_and_the_c_follow_the_placement() -> None:
    """Forced to the disco-f746ng's SDRAM: the fit counts no state in RAM and says where it is,
    the C puts it in the external RAM's section, and the linker script gets that region."""
    _, tg = training_graph(16, 12, momentum=0.5)
    target = resolve_target(load_board("disco-f746ng"), emulate=True)
    gens = {
        choice: generate(
            tg.graph, options=PlanOptions(target=memory_target(target), state_memory=choice)
        )
        for choice in ("auto", "slow")
    }
    state = gens["slow"].plan.persistent
    assert gens["auto"].plan.persistent.in_ram and state.memory == "sdram" and state.bytes > 0
    fits = {c: target_fit(g.graph, g.plan, dynamic.STATIC, 0, target) for c, g in gens.items()}
    assert fits["auto"].ram_need - fits["slow"].ram_need == state.bytes
    assert fits["slow"].state == 0 and fits["slow"].external_state == state.bytes
    assert f"sdram {state.bytes:,} bytes (model state)" in fits["slow"].summary()
    model_c = gens["slow"].files["model.c"]
    array = f"g_external_state[{state.bytes}] MCU_ALIGNED(16)"
    assert f'{array} __attribute__((section(".mcu_slow")))' in model_c
    assert "g_model_state" not in model_c
    slow = link_regions(gens["slow"], target)["slow"]
    assert slow is not None and slow["name"] == "sdram" and slow["origin"] == 0x60000000
    assert link_regions(gens["auto"], target)["slow"] is None


def test_a_state_the_board_cannot_hold_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The NUCLEO-F767ZI has no external RAM: a state of 786 KB (weights, sums and momenta of a
    256 x 256 layer) fails before anything is built, in one line naming the board, the bytes and
    what to do; forcing it to slow memory there is one line too."""
    model, _ = training_graph(256, 256)
    path = tmp_path / "wide.tflite"
    path.write_bytes(write_model(model))
    x, y = synthetic_dataset(model, 2)
    np.savez(tmp_path / "d.npz", x=x, y=y)
    argv = ["train", str(path), "--data", str(tmp_path / "d.npz"), "--trainable", "last:2"]
    argv += ["--board", "nucleo-f767", "--emulate", "--momentum", "0.9", "--accumulate", "2"]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "model does not fit nucleo-f767's twin (mps2-an500): RAM needs at least" in err
    assert "nucleo-f767 has no external RAM to hold the state" in err
    assert main([*argv, "--state-memory", "slow"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--state-memory slow: nucleo-f767 has no external RAM" in err


def test_plan_json_says_where_the_state_is(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model, _ = training_graph(16, 12)
    path = tmp_path / "m.tflite"
    path.write_bytes(write_model(model))
    argv = ["plan", str(path), "--trainable", "last:2", "--board", "disco-f746ng", "--json"]
    # the board's port does not set up its SDRAM yet: only the twin holds such a state
    assert main([*argv, "--state-memory", "slow"]) == 3
    assert json.loads(capsys.readouterr().out)["fit"]["not_ready"] == "sdram (SDRAM)"
    argv.append("--emulate")
    assert main([*argv, "--state-memory", "slow"]) == 0
    fit = json.loads(capsys.readouterr().out)["fit"]
    assert fit["state_memory"] == "sdram" and fit["state"] == 0 and fit["external_state"] > 0
