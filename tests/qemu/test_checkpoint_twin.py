"""Checkpoints on the twin: the state survives in two slots (semihosting files) with sequence
numbers and CRCs (runtime_c/src/checkpoint.c); QEMU killed at random points of a save always
leaves a valid checkpoint, the newest complete one; a corrupt slot is detected by its CRC and the
older one is loaded; `mcugen train --checkpoint-every/--resume` continue a run."""

from __future__ import annotations

import contextlib
import random
import struct
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import Target, load_board, resolve_target
from mcugen.cli import main
from mcugen.errors import RunError
from mcugen.firmware.compile import build
from mcugen.link.device_run import open_device
from mcugen.link.protocol import CMD_CHECKPOINT, DeviceLink, encode_frame
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from support import FULL_SWEEP, NEEDS_TWIN, classifier_file, int8_classifier

pytestmark = NEEDS_TWIN
HEADER = struct.Struct("<8I")  # magic, version, sequence, bytes, tag, data crc, 0, header crc
MAGIC = 0x504B434D


@pytest.fixture(scope="module")
def firmware() -> Iterator[tuple[Generated, Target, Path, Path]]:
    """A training graph with 3.6 KB of state (its weights: the state crosses the emulated UART,
    4-20 KB/s, several times per cut) on the F767 twin."""
    model = int8_classifier(seed=2, depth=32, hidden=24, classes=6)
    tg = build_training_graph(model, TrainOptions(trainable="last:2"))
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    gen = generate(tg.graph, options=PlanOptions(rewrites=False, core=target.port_board.core))
    with tempfile.TemporaryDirectory(prefix="mcugen-ckpt-") as tmp:
        elf = build(gen, target, Path(tmp) / "fw").executable
        yield gen, target, elf, Path(tmp)


def slot_sequence(path: Path) -> int:
    """The slot's sequence number when it holds a complete, valid checkpoint, else 0: the
    firmware's check, written again from the format."""
    data = path.read_bytes() if path.exists() else b""
    if len(data) < HEADER.size:
        return 0
    magic, version, seq, size, _tag, crc, _, hcrc = HEADER.unpack_from(data)
    if magic != MAGIC or version != 1 or hcrc != zlib.crc32(data[:28]) or len(data) < 32 + size:
        return 0
    return seq if zlib.crc32(data[32 : 32 + size]) == crc else 0


def newest(storage: Path) -> int:
    return max(slot_sequence(storage / f"mcugen-checkpoint-{k}.bin") for k in (0, 1))


def read_state(link: DeviceLink, gen: Generated) -> bytes:
    return b"".join(link.read_state(i, v.nbytes) for i, v in enumerate(gen.view_model.variables))


def write_state(link: DeviceLink, gen: Generated, state: bytes) -> None:
    at = 0
    for i, v in enumerate(gen.view_model.variables):
        link.write_state(i, state[at : at + v.nbytes])
        at += v.nbytes


def random_state(gen: Generated, rng: np.random.Generator) -> bytes:
    total = sum(v.nbytes for v in gen.view_model.variables)
    return rng.normal(0, 1, total // 4).astype(np.float32).tobytes()


def save_calls(gen: Generated) -> int:
    """Erase and write calls of one save: the erase, the state in 32-byte writes, the header."""
    return 1 + sum((v.nbytes + 31) // 32 for v in gen.view_model.variables) + 1


def first_checkpoint(gen: Generated, target: Target, elf: Path, storage: Path) -> bytes:
    state = random_state(gen, np.random.default_rng(1))
    with open_device(target, elf, None, cwd=storage) as link:
        write_state(link, gen, state)
        assert link.checkpoint(load=False) == (0, 1)
    return state


def test_a_power_cut_anywhere_in_a_save_leaves_the_last_checkpoint(
    firmware: tuple[Generated, Target, Path, Path],
) -> None:
    """The twin's store loses power at its (K+1)-th erase or write call (the cut file): before
    the erase, inside the state, at the header, and just after the save (K = all calls)."""
    gen, target, elf, tmp = firmware
    storage = tmp / "cuts"
    storage.mkdir()
    states = {1: first_checkpoint(gen, target, elf, storage)}
    calls = save_calls(gen)
    pick = random.Random(4)
    points = [
        0,
        1,
        2,
        calls // 2,
        calls - 2,
        calls - 1,
        calls,
        *pick.sample(range(calls), 5 if FULL_SWEEP else 2),
    ]
    rng = np.random.default_rng(2)
    for k in points:
        before = newest(storage)
        new = random_state(gen, rng)
        (storage / "mcugen-store-cut.bin").write_bytes(struct.pack("<I", k))
        with open_device(target, elf, None, cwd=storage) as link:
            write_state(link, gen, new)
            with pytest.raises(RunError) if k < calls else contextlib.nullcontext():
                link.checkpoint(load=False)  # the twin exits mid-save: the link drops
        (storage / "mcugen-store-cut.bin").unlink()
        after = newest(storage)
        assert after == (before + 1 if k >= calls else before), (k, before, after)
        states.setdefault(after, new)
        with open_device(target, elf, None, cwd=storage) as link:
            assert link.checkpoint(load=True) == (0, after), k
            assert read_state(link, gen) == states[after], f"cut after {k} calls"


def test_qemu_killed_during_saves_always_leaves_a_valid_checkpoint(
    firmware: tuple[Generated, Target, Path, Path],
) -> None:
    """QEMU killed at random moments after a save request: the slots always hold a valid
    checkpoint, the newest complete one. (A save takes a few milliseconds of wall time, so
    most kills land before or after it; the cut file above is what reaches every point.)"""
    gen, target, elf, tmp = firmware
    storage = tmp / "kills"
    storage.mkdir()
    states = {1: first_checkpoint(gen, target, elf, storage)}
    pick = random.Random(5)
    rng = np.random.default_rng(3)
    cut = 0
    for trial in range(6):
        with open_device(target, elf, None, cwd=storage) as link:
            status, seq = link.checkpoint(load=True)
            assert (status, seq) == (0, newest(storage)), trial
            assert read_state(link, gen) == states[seq], f"trial {trial}"
            new = random_state(gen, rng)
            write_state(link, gen, new)
            link.port.write(encode_frame(CMD_CHECKPOINT, b"\0"))  # save, and do not wait
            time.sleep(pick.uniform(0.0, 0.01))
        # leaving the block killed QEMU: the save finished, or it was cut
        after = newest(storage)
        assert after in (seq, seq + 1), (trial, seq, after)
        if after == seq + 1:
            states[after] = new
        else:
            cut += 1
    print(f"{cut} of 6 kills landed before the save completed")


def test_a_corrupt_slot_falls_back_to_the_older_one(
    firmware: tuple[Generated, Target, Path, Path],
) -> None:
    gen, target, elf, tmp = firmware
    storage = tmp / "corrupt"
    storage.mkdir()
    rng = np.random.default_rng(5)
    first, second = random_state(gen, rng), random_state(gen, rng)
    with open_device(target, elf, None, cwd=storage) as link:
        assert link.checkpoint(load=True)[0] == 4  # nothing saved yet
        for state in (first, second):
            write_state(link, gen, state)
            assert link.checkpoint(load=False)[0] == 0
    newer = max(storage.glob("mcugen-checkpoint-*.bin"), key=slot_sequence)
    data = bytearray(newer.read_bytes())
    data[100] ^= 0x40
    newer.write_bytes(bytes(data))
    with open_device(target, elf, None, cwd=storage) as link:
        assert link.checkpoint(load=True) == (0, 1)
        assert read_state(link, gen) == first


def test_train_resumes_from_its_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, x, y = classifier_file(tmp_path, 16, seed=5)
    np.savez(tmp_path / "data.npz", x=x, y=y)
    argv = [
        "train",
        str(path),
        "--board",
        "nucleo-f767",
        "--emulate",
        "--data",
        str(tmp_path / "data.npz"),
        "--trainable",
        "last:2",
        "--checkpoint-dir",
        str(tmp_path),
    ]
    # two epochs straight, against one epoch, a saved state, and one resumed epoch
    assert main([*argv, "--epochs", "2", "-o", str(tmp_path / "straight.tflite")]) == 0
    assert main([*argv, "--checkpoint-every", "5"]) == 0
    assert main([*argv, "--resume", "-o", str(tmp_path / "resumed.tflite")]) == 0
    straight = (tmp_path / "straight.tflite").read_bytes()
    assert (tmp_path / "resumed.tflite").read_bytes() == straight
    capsys.readouterr()
    # the host build has no store: one error line
    assert (
        main(
            [
                "train",
                str(path),
                "--board",
                "host",
                "--data",
                str(tmp_path / "data.npz"),
                "--resume",
            ]
        )
        == 2
    )
    assert "the host build has none" in capsys.readouterr().err
