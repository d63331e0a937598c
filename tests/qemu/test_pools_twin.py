"""The arena split over the NUCLEO-F767ZI's DTCM and SRAM1 (plan/pools), run on its QEMU twin:
bit-exact with TFLM, and each memory's use as the planner counts it is what the linker placed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import UnsupportedError
from mcugen.firmware.compile import build
from mcugen.firmware.sizes import firmware_sizes, section_sizes
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate_from_file
from mcugen.plan.fit import fit_of
from mcugen.plan.target import memory_target
from support import EXAMPLE, NEEDS_TWIN, SHARED_MODELS, resized, run_twin_against_tflm

pytestmark = NEEDS_TWIN

DTCM = 131072


def twin() -> Target:
    return resolve_target(load_board("nucleo-f767"), emulate=True)


def options(fast: int | None = None) -> PlanOptions:
    """As `mcugen build --board nucleo-f767 --emulate --pools fast_first` plans, with a DTCM of
    `fast` bytes, and the graph run whole (no patch stage: the pools are what is tested)."""
    target = memory_target(twin())
    assert target.pool_memories()[0].name == "dtcm"
    if fast is not None:
        target = resized(target, "dtcm", fast)
    return PlanOptions(keep_input="auto", target=target, patch_overhead=0, pools="fast_first")


def run_split(gen: Generated, workdir: Path, seeds: list[int]) -> list[int]:
    """Build `gen` for the twin, check each memory's use against the ELF, run `seeds` and
    compare with TFLM; the instructions per inference."""
    target = twin()
    result = build(gen, target, workdir / Path(gen.source).stem)
    fit = fit_of(gen.graph, gen.plan, "static", 0, memory_target(target))
    sections = section_sizes(result.executable, target)
    linked = firmware_sizes(result.executable, target)
    assert fit.ram_need == linked.ram_bytes and len(fit.pools) >= 2
    for use in fit.pools:
        placed = sections.get(f".mcu_pool_{use.name}", 0)
        if use.firmware:
            placed += sum(sections.get(s, 0) for s in (".data", ".bss", ".stack"))
        assert use.used == placed, use
    model = Path(gen.source).read_bytes()
    run = run_twin_against_tflm(target, result.executable, model, gen.graph, seeds)
    return [run.instructions(t) for t in run.ticks_per_inference]


def test_the_example_forced_into_two_pools_is_bit_exact(workdir: Path) -> None:
    gen = generate_from_file(EXAMPLE, options(fast=4096))
    assert gen.plan.pools is not None and gen.plan.pools.split
    assert [p.name for p in gen.plan.pools.pools] == ["dtcm", "sram1"]
    counts = run_split(gen, workdir, [0, 0])
    assert counts[0] == counts[1]


def _large_models() -> list[str]:
    if not SHARED_MODELS.is_dir():
        return []
    return sorted(p.stem for p in SHARED_MODELS.glob("*.tflite"))


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="needs ../shared/models")
@pytest.mark.parametrize("stem", _large_models())
def test_every_shared_model_gets_the_pools_it_needs(stem: str, workdir: Path) -> None:
    """Each shared model on the board: an arena that fits the DTCM stays one pool; one that fits
    no arrangement says by how much; every other runs split over DTCM and SRAM1, bit-exact; a
    model the runtime cannot run is the one TFLM cannot run either."""
    path = SHARED_MODELS / f"{stem}.tflite"
    try:
        gen = generate_from_file(path, options())
    except UnsupportedError as exc:
        assert "hybrid" in exc.what  # mlperf_kws_dscnn_hybrid, which TFLM rejects too
        return
    fit = fit_of(gen.graph, gen.plan, "static", 0, memory_target(twin()))
    if gen.plan.arena_bytes <= DTCM:
        assert gen.plan.pools is not None and not gen.plan.pools.split
    elif gen.plan.pools is None:
        assert not fit.fits and "short by" in gen.plan.pools_error
    else:
        assert gen.plan.pools.split and gen.plan.pools.pools[0].name == "dtcm" and fit.fits
        run_split(gen, workdir, [0])
