"""The board-fit verdict (mcugen/plan/fit.py) and the one atomic writer (mcugen/io.py)."""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mcugen import cli
from mcugen.boards import board_names, load_board, resolve_target
from mcugen.commands._common import plan_options
from mcugen.errors import BuildError
from mcugen.firmware.compile import build
from mcugen.firmware.fits import target_fit
from mcugen.firmware.sizes import firmware_sizes
from mcugen.model.builder import GraphBuilder
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.outputs import write_file as write_atomic
from mcugen.pipeline import generate, generate_from_file
from mcugen.plan import dynamic
from mcugen.plan.fit import Fit, allocator_arena, fit_of
from mcugen.plan.ram_use import LinkedFlash
from mcugen.plan.target import MemoryTarget, memory_target
from support import EXAMPLE, SHARED_MODELS, resized, sweep
from testgraphs import benchmark_suite

F767 = MemoryTarget("nucleo-f767", 524_288, 2_097_152, 8192, 1184)


@pytest.mark.parametrize("allocator", dynamic.ALLOCATORS.names())
def test_allocator_arena_is_the_arena_the_firmware_declares(allocator: str) -> None:
    graphs = [("example", lambda: load_model(EXAMPLE)), *benchmark_suite(quick=True)]
    for name, make in graphs:
        gen = generate(make(), options=PlanOptions(allocator=dynamic.Allocator(allocator)))
        assert allocator_arena(gen.plan, allocator) == gen.view_model.arena_bytes, name


def test_paged_arena_is_fast_arena_plus_slow_array_in_ram() -> None:
    """Paging on a board without an external memory (here the host): the firmware declares the
    fast arena and the slow memory's array, both in RAM, and the fit counts both."""
    graphs = [("example", lambda: load_model(EXAMPLE)), *benchmark_suite(quick=True)]
    for name, make in graphs:
        budget = generate(make()).plan.arena_bytes // 3
        options = PlanOptions(target=memory_target(None, budget), pager="belady")
        gen = generate(make(), options=options)
        assert gen.plan.paging is not None and gen.dynamic is not None, name
        assert gen.view_model.arena_bytes <= budget, name
        declared = gen.view_model.arena_bytes + gen.dynamic.slow_bytes
        assert allocator_arena(gen.plan, dynamic.STATIC) == declared, name


def test_fit_verdict_figures_and_messages() -> None:
    gen = generate(load_model(EXAMPLE))
    fit = fit_of(gen.graph, gen.plan, dynamic.STATIC, 848, F767)
    assert fit.fits and fit.problem() is None
    # fixed part, input copy (3,072 B), profile ticks of 9 operators (an even count)
    assert fit.ram_need == gen.plan.arena_bytes + 8192 + 1184 + 3072 + 10 * 8
    assert fit.summary().startswith(f"fits nucleo-f767: RAM {fit.ram_need:,} of 524,288 bytes")
    assert set(fit.as_json()) == {
        "board", "arena", "state", "stack", "ram_size", "weights", "code", "tables", "flash_need",
        "flash_size", "flash_linked", "ram_need", "fits", "unsupported", "pools",
        "external_weights", "external_memory", "external_state", "state_memory", "ram", "twin",
        "not_ready",
    }  # fmt: skip
    ram = fit.as_json()["ram"]  # the vocabulary every command shares (plan.fit.RamUse)
    assert ram["total"] == fit.ram_need and ram["arena"] == gen.plan.arena_bytes
    assert ram["runtime_state"] == 1184 + 3072 + 10 * 8 and ram["stack"] == 8192
    assert "(arena 4,704, runtime state 4,336, stack 8,192)" in fit.summary()
    assert fit.flash_need == 848 and not fit.as_json()["flash_linked"]
    tiny = MemoryTarget("tiny", 4096, 512, 1024, 256)
    small = fit_of(gen.graph, gen.plan, dynamic.STATIC, 848, tiny)
    problem = small.problem()
    assert isinstance(problem, BuildError) and not small.fits
    assert f"over by {small.ram_need - 4096} bytes" in problem.line()
    flash_only = fit_of(
        gen.graph, gen.plan, dynamic.STATIC, 848, MemoryTarget("f", 1 << 20, 512, 0, 0)
    )
    assert (
        "flash needs 848 bytes (weights 848; code not counted: not linked yet), the board "
        "has 512; over by 336" in str(flash_only.problem())
    )
    # linked: code and tables count, and can be what does not fit
    linked = fit_of(gen.graph, gen.plan, dynamic.STATIC, 400, replace(F767, board="f"))
    memory = replace(linked.memory, flash_size=1000)
    linked = replace(linked, memory=memory, linked=LinkedFlash(code=500, tables=200))
    assert linked.flash_need == 1100 and not linked.fits
    assert (
        "flash needs 1100 bytes (weights 400, code 500, tables 200), the board has 1000; "
        "over by 100" in str(linked.problem())
    )
    assert "flash 1,100 of 1,000 bytes (weights 400, code 500, tables 200), over by 100" in (
        linked.summary()
    )


BOARDS = [name for name in board_names() if not load_board(name).is_host]
FIT_CORE = {"nucleo-f767"}


def _fit_models() -> list[tuple[str, Callable[[], Graph]]]:
    """The bundled model, a generated graph, and when ../shared/models is there KWS (an input of
    490 bytes, not a multiple of 8) and the MNIST LSTM (72 bytes of state, padded to 80)."""
    models: list[tuple[str, Callable[[], Graph]]] = [
        ("example", functools.partial(load_model, EXAMPLE)),
        ("nas_cells3", dict(benchmark_suite(quick=True))["nas_cells3"]),
    ]
    for stem in ("mlperf_kws_dscnn_int8", "tflm_mnist_lstm_int8"):
        path = SHARED_MODELS / f"{stem}.tflite"
        if path.is_file():
            models.append((stem, functools.partial(load_model, path)))
    return models


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
@pytest.mark.parametrize("board", BOARDS)
def test_the_verdict_equals_the_linked_firmware_ram_to_the_byte(board: str, tmp_path: Path) -> None:
    """`plan --board` and `build` agree with the linker: arena + stack + firmware RAM is the
    firmware's .data + .bss + .stack, for both kinds of allocator."""
    target = resolve_target(load_board(board), emulate=False)
    variants = [
        (dynamic.Allocator.STATIC, "no"),
        (dynamic.Allocator.STATIC, "yes"),  # input kept in the arena: no runner copy
        (dynamic.Allocator.COMPACTING, "no"),
    ]
    # every model on the suite's core board (the others' linker scripts and memories with the
    # bundled model; benchmarks/sweeps.py runs every model on every board)
    models = sweep(_fit_models(), lambda case: board in FIT_CORE or case[0] == "example")
    for name, make in models:
        for allocator, keep in variants:
            options = PlanOptions(allocator=allocator, keep_input=keep)
            gen = generate(make(), options=options)
            assert gen.plan.input_kept == (keep == "yes")
            fit = fit_of(gen.graph, gen.plan, allocator, 0, memory_target(target))
            result = build(gen, target, tmp_path / f"{name}-{allocator}-{keep}")
            linked = firmware_sizes(result.executable, target)
            assert fit.ram_need == linked.ram_bytes, (name, allocator, keep, fit, linked)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
@pytest.mark.parametrize("board", ["nucleo-f767", "netduinoplus2"])
def test_plan_board_equals_the_build_in_ram_and_flash(
    board: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `plan --board --json` says is what `build` links: RAM and flash to the byte, flash
    split into weights, code and tables as the build reports them."""
    models = [EXAMPLE, SHARED_MODELS / "mlperf_kws_dscnn_int8.tflite"]
    for model in [m for m in models if m.is_file()]:
        assert cli.main(["plan", str(model), "--board", board, "--json", "--no-strategies"]) == 0
        fit = json.loads(capsys.readouterr().out)["fit"]
        target = resolve_target(load_board(board), emulate=False)
        # as build plans it: the input kept where that saves RAM, the board's core's kernels
        options = PlanOptions(keep_input="auto", core=target.port_board.core)
        gen = generate_from_file(model, options)
        linked = firmware_sizes(build(gen, target, tmp_path / model.stem).executable, target)
        assert fit["flash_linked"] and fit["fits"]
        assert (fit["ram_need"], fit["flash_need"]) == (linked.ram_bytes, linked.flash_bytes)
        assert (fit["weights"], fit["code"], fit["tables"]) == (
            linked.weights,
            linked.code,
            linked.other_rodata,
        )


def test_outputs_honour_the_umask(tmp_path: Path) -> None:
    """Written files get the mode open() would give them, not mkstemp's private 0600."""
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "a.bin", b"x")
        os.umask(0o002)
        write_atomic(tmp_path / "b.bin", b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "a.bin").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "b.bin").stat().st_mode & 0o777 == 0o664


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
def test_a_split_arena_verdict_equals_each_linked_memory(tmp_path: Path) -> None:
    """Pools (plan/pools): per memory, the verdict's pool plus firmware RAM is what the linker
    put in that memory's region, and the total is the firmware's RAM."""
    from mcugen.firmware.sizes import section_sizes

    target = resolve_target(load_board("nucleo-f767"), emulate=False)
    small = resized(memory_target(target), "dtcm", 4096)
    options = PlanOptions(keep_input="auto", target=small, pools="fast_first")
    gen = generate(load_model(EXAMPLE), options=options)
    fit = fit_of(gen.graph, gen.plan, dynamic.STATIC, 0, memory_target(target))
    result = build(gen, target, tmp_path / "split")
    sections = section_sizes(result.executable, target)
    assert [p.name for p in fit.pools] == ["dtcm", "sram1"] and fit.fits
    for use in fit.pools:
        firmware = sum(sections.get(s, 0) for s in (".data", ".bss", ".stack"))
        assert use.used == sections[f".mcu_pool_{use.name}"] + (firmware if use.firmware else 0)
    assert fit.ram_need == firmware_sizes(result.executable, target).ram_bytes
    assert set(fit.as_json()["pools"]) == {"dtcm", "sram1"}


def _float_image_model() -> Graph:
    """A 602,112-byte float32 image, quantized, one strided convolution, an average pool: the
    shape of MCUNet-v2's first stage (issue 31 item 9)."""
    b = GraphBuilder("big_input")
    rng = np.random.default_rng(0)
    x = b.input([1, 224, 224, 3], "float32", name="image")
    q = b.activation([1, 224, 224, 3], "int8", scale=0.02, zero_point=0)
    b.op("QUANTIZE", [x], [q])
    filt = rng.integers(-100, 100, (16, 3, 3, 3), dtype=np.int8)
    w = b.const(filt, scale=[0.01] * 16, zero_point=[0] * 16, axis=0)
    bias = b.const(np.zeros(16, np.int32), scale=[0.0002] * 16, zero_point=[0] * 16)
    c = b.activation([1, 112, 112, 16], "int8", scale=0.05, zero_point=-10)
    b.op("CONV_2D", [q, w, bias], [c], padding=0, stride_w=2, stride_h=2,
         fused_activation_function=1)  # fmt: skip
    p = b.activation([1, 1, 1, 16], "int8", scale=0.05, zero_point=-10)
    b.op("AVERAGE_POOL_2D", [c], [p], padding=1, stride_w=112, stride_h=112, filter_width=112,
         filter_height=112, fused_activation_function=0)  # fmt: skip
    b.output(p)
    return b.graph()


def test_a_large_input_goes_where_the_paged_arena_goes(tmp_path: Path) -> None:
    """On the disco-f746ng twin the plan pages through the SDRAM, and the runner's copy of the
    input goes there too: the RAM holds the runtime state and stack, not 602,112 bytes of image
    blamed on the arena. On the board itself the SDRAM is not set up yet: does not fit, exit 3,
    naming the memory."""
    path = tmp_path / "big.tflite"
    path.write_bytes(write_model(_float_image_model()))
    args = cli._parser().parse_args(["build", str(path), "--board", "disco-f746ng", "--emulate"])
    twin = resolve_target(load_board("disco-f746ng"), emulate=True)
    gen = generate_from_file(path, plan_options(args, firmware=True, target=twin))  # as build
    fit = target_fit(gen.graph, gen.plan, dynamic.STATIC, 0, twin)
    ram = fit.ram()
    assert fit.fits and fit.twin == "mps2-an500" and "input copy" in ram.slow_holds
    assert ram.runtime_state < 4096 and ram.slow >= 602_112
    board = resolve_target(load_board("disco-f746ng"), emulate=False)
    on_board = target_fit(gen.graph, gen.plan, dynamic.STATIC, 0, board)
    assert not on_board.fits and on_board.not_ready == "sdram (SDRAM)"
    problem = on_board.problem()
    assert problem is not None and problem.exit_code == 3
    assert "disco-f746ng's port does not set up its sdram (SDRAM) yet" in problem.line()


def test_the_ram_hint_names_the_largest_part() -> None:
    base = Fit(MemoryTarget("b", 500, 1 << 20, 100), 1000, 0, 200)
    assert "the arena is the largest part" in str(base.problem())
    runtime = replace(base, arena=100, runtime=1000)
    assert "the runtime state is the largest part" in str(runtime.problem())
    state = replace(base, arena=100, state=1000)
    assert "the model state (variable tensors) is the largest part" in str(state.problem())
    assert "(arena 100, model state 1000, runtime state 200, stack 100)" in str(state.problem())


def test_the_flash_hint_names_the_largest_part() -> None:
    memory = MemoryTarget("b", 1 << 20, 1000, 0)
    base = replace(Fit(memory, 0, 100, 0), linked=LinkedFlash(code=800, tables=300))
    assert "the code is the largest part: --kernels reference" in str(base.problem())
    tables = replace(base, linked=LinkedFlash(code=300, tables=800))
    assert "the tables and parameters are the largest part" in str(tables.problem())
    weights = replace(base, weights=2000)
    assert "the weights are the largest part" in str(weights.problem())
