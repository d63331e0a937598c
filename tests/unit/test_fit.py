"""The board-fit verdict (mcugen/plan/fit.py) and the one atomic writer (mcugen/io.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcugen.errors import BuildError, McugenError
from mcugen.io import write_atomic
from mcugen.model.graphs import benchmark_suite
from mcugen.model.tflite_import import load_model
from mcugen.pipeline import PlanOptions, generate
from mcugen.plan import dynamic
from mcugen.plan.fit import BoardLimits, allocator_arena, fit_of
from support import EXAMPLE

F767 = BoardLimits("nucleo-f767", 524_288, 2_097_152, 8192, 1280)


@pytest.mark.parametrize("allocator", list(dynamic.Allocator))
def test_allocator_arena_is_the_arena_the_firmware_declares(allocator: dynamic.Allocator) -> None:
    graphs = [("example", lambda: load_model(EXAMPLE)), *benchmark_suite(quick=True)]
    for name, build in graphs:
        gen = generate(build(), options=PlanOptions(allocator=allocator))
        assert allocator_arena(gen.plan, allocator) == gen.view_model.arena_bytes, name


def test_fit_verdict_figures_and_messages() -> None:
    gen = generate(load_model(EXAMPLE))
    fit = fit_of(gen.plan, dynamic.STATIC, 848, F767)
    assert fit.fits and fit.problem() is None
    assert fit.ram_need == gen.plan.arena_bytes + 8192 + 1280
    assert fit.summary().startswith(f"fits nucleo-f767: RAM {fit.ram_need:,} of 524,288 bytes")
    assert set(fit.as_json()) == {
        "board", "arena", "stack", "ram_size", "weights", "flash_size", "ram_need", "fits"
    }  # fmt: skip
    tiny = BoardLimits("tiny", 4096, 512, 1024, 256)
    small = fit_of(gen.plan, dynamic.STATIC, 848, tiny)
    problem = small.problem()
    assert isinstance(problem, BuildError) and not small.fits
    assert f"over by {small.ram_need - 4096} bytes" in problem.line()
    flash_only = fit_of(gen.plan, dynamic.STATIC, 848, BoardLimits("f", 1 << 20, 512, 0, 0))
    assert "weights need 848 bytes of flash, the board has 512; over by 336" in str(
        flash_only.problem()
    )


def test_write_atomic_replaces_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.txt"
    write_atomic(out, "first é")
    assert out.read_bytes() == "first é".encode()
    write_atomic(out, b"second")
    assert out.read_bytes() == b"second"

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(out, b"third")
    assert out.read_bytes() == b"second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temporary left
    monkeypatch.undo()
    with pytest.raises(McugenError, match="output directory does not exist"):
        write_atomic(tmp_path / "missing" / "x.bin", b"")
    with pytest.raises(McugenError, match="output is a directory"):
        write_atomic(tmp_path, b"")
