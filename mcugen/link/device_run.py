"""Run a model on a device (emulated twin or real board) through the serial protocol."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import serial

from mcugen import progress
from mcugen.boards import CONSOLE_BAUD, Target
from mcugen.errors import RunError
from mcugen.link.protocol import DeviceLink
from mcugen.link.qemu import qemu_console
from mcugen.model.ir import DTYPES, Graph

#: Under QEMU with -icount shift=0 one instruction takes 1 ns of virtual time.
QEMU_INSTRUCTIONS_PER_SECOND = 1_000_000_000


@dataclass(frozen=True)
class DeviceRun:
    outputs: list[list[np.ndarray]]  # [sample][output]
    ticks_per_inference: list[int]  # per sample
    cycle_hz: int
    stack_used: int
    stack_bytes: int
    arena_bytes: int
    node_ticks: list[int]  # last sample, per step of the order, when profiled
    emulated: bool
    seconds: float
    moved_bytes: int = 0  # per inference (the last): moved or paged by a dynamic allocator

    def instructions(self, ticks: int) -> int:
        """Instructions (under QEMU) or core cycles (on a board) for `ticks` of the counter."""
        if self.emulated:
            return ticks * QEMU_INSTRUCTIONS_PER_SECOND // self.cycle_hz
        return ticks

    @property
    def unit(self) -> str:
        return "instructions" if self.emulated else "cycles"


@contextlib.contextmanager
def open_console(
    target: Target,
    elf: Path,
    port: str | None,
    *,
    cwd: Path | None = None,
    serials: Sequence[socket.socket] = (),
) -> Iterator[tuple[serial.SerialBase, str]]:
    """The console of the emulated twin running `elf` (port None) or of a real board on a serial
    port, as (pyserial object, name for messages), at the baud rate of the target's MLPerf Tiny
    mode (`boards.CONSOLE_BAUD`: 9600 for energy-mode firmware). The board must already run the
    firmware."""
    if port is None:
        with qemu_console(target.machine, elf, cwd=cwd, serials=serials) as link:
            yield link, f"QEMU {target.machine}"
        return
    try:
        ser = serial.serial_for_url(port, baudrate=CONSOLE_BAUD[target.mlperf_mode], timeout=0.5)
    except (serial.SerialException, ValueError) as exc:
        raise RunError(
            f"cannot open serial port ({exc})",
            where=port,
            hint="check the port name and that no other program holds it",
        ) from None
    with ser:
        yield ser, port


@contextlib.contextmanager
def open_device(
    target: Target,
    elf: Path,
    port: str | None,
    *,
    cwd: Path | None = None,
    serials: Sequence[socket.socket] = (),
) -> Iterator[DeviceLink]:
    """mcugen's binary protocol on the emulated twin (port None) or a real board.

    Under emulation it first waits for the firmware's boot banner: some QEMU UART models (the
    STM32 one of netduinoplus2) drop bytes that arrive before the firmware enables the UART."""
    with open_console(target, elf, port, cwd=cwd, serials=serials) as (ser, name):
        if port is None:
            _wait_for_banner(ser, name, BOOT_TIMEOUT_S)
        yield DeviceLink(ser, name=name)


BOOT_TIMEOUT_S = 20.0


def _wait_for_banner(ser: serial.SerialBase, name: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    seen = bytearray()
    while b"m-ready" not in seen:
        if time.monotonic() > deadline:
            raise RunError(
                f"the firmware did not boot within {timeout:.0f} s",
                where=name,
                hint=f"console said: {bytes(seen[-80:])!r}",
            )
        seen += ser.read(64)


def run_samples(
    link: DeviceLink,
    graph: Graph,
    samples: list[list[np.ndarray]],
    *,
    emulated: bool,
    profile: bool = False,
    label: Callable[[int], str] | None = None,
) -> DeviceRun:
    """Run `samples` one by one; `label(k)` is what the progress line says while sample k runs
    (default: sample k + 1 of n)."""
    start = time.perf_counter()
    info = link.info()
    check_info(info.input_bytes, info.output_bytes, graph, link.name)
    outputs, ticks, node_ticks, stack, moved = [], [], [], 0, 0
    with progress.step(f"running on {link.name}") as step:
        for k, sample in enumerate(samples):
            step.update(label(k) if label else f"sample {k + 1} of {len(samples)}")
            for i, (t_index, arr) in enumerate(zip(graph.inputs, sample, strict=True)):
                t = graph.tensors[t_index]
                link.write_input(i, np.ascontiguousarray(arr, dtype=DTYPES[t.dtype][0]).tobytes())
            res = link.invoke(1, profile=profile)
            if res.status != 0:
                raise RunError(
                    f"inference failed on the device: status {res.status} at operator "
                    f"{res.failed_node}",
                    where=link.name,
                )
            ticks.append(res.ticks)
            stack = max(stack, res.stack_used)
            moved = res.moved_bytes
            outputs.append(_read_outputs(link, graph))
            if profile:
                node_ticks = link.profile(info.num_nodes)
    return DeviceRun(
        outputs,
        ticks,
        info.cycle_hz,
        stack,
        info.stack_bytes,
        info.arena_bytes,
        node_ticks,
        emulated,
        time.perf_counter() - start,
        moved,
    )


def _read_outputs(link: DeviceLink, graph: Graph) -> list[np.ndarray]:
    result = []
    for i, t_index in enumerate(graph.outputs):
        t = graph.tensors[t_index]
        raw = link.read_output(i, t.nbytes)
        result.append(np.frombuffer(raw, dtype=DTYPES[t.dtype][0]).reshape(t.shape).copy())
    return result


def check_info(inputs: tuple[int, ...], outputs: tuple[int, ...], graph: Graph, name: str) -> None:
    want_in = tuple(graph.tensors[t].nbytes for t in graph.inputs)
    want_out = tuple(graph.tensors[t].nbytes for t in graph.outputs)
    if inputs != want_in or outputs != want_out:
        raise RunError(
            f"the firmware on the device runs another model (inputs {inputs} bytes, "
            f"outputs {outputs}; expected {want_in}, {want_out})",
            where=name,
            hint="build and flash this model first",
        )
