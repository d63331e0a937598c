"""`--patch-overhead auto`, the default: a patch stage is looked for only when the graph run
whole does not fit the board's memories and the board has no external memory to page to; a
budget given explicitly patches every plan, and 0 never does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mcugen.cli import _parser
from mcugen.commands._common import patch_choice
from mcugen.options import PlanOptions
from mcugen.pipeline import prepare
from mcugen.plan import dynamic
from mcugen.plan.fit import firmware_ram
from mcugen.plan.patches import DEFAULT_OVERHEAD
from mcugen.plan.pools import PoolMemory
from mcugen.plan.target import MemoryTarget
from patch_graphs import image_stem
from support import pool_target

GRAPH = image_stem(1, hw=64)


def one_memory(size: int) -> MemoryTarget:
    """A board with one RAM of `size` bytes, no stack and no fixed RAM."""
    return pool_target((PoolMemory("ram", size, 0.5, 0.5),))


def needs() -> tuple[int, int]:
    """The RAM GRAPH needs run whole, and patched at the default budget: the arena plus the
    firmware's model-sized buffers (plan/fit.py)."""
    none = MemoryTarget("")
    sizes = []
    for options in (
        PlanOptions(patch_overhead=0),
        PlanOptions(patch_overhead=DEFAULT_OVERHEAD, patch_when="always"),
    ):
        graph, _, plan = prepare(GRAPH, options)
        sizes.append(plan.arena_bytes + firmware_ram(graph, plan, dynamic.STATIC, none))
    assert plan.patches is not None and plan.patches.stage is not None
    assert sizes[1] < sizes[0]
    return sizes[0], sizes[1]


def test_auto_patches_only_a_model_that_does_not_fit() -> None:
    whole, patched = needs()
    # room for the patched arena only: auto finds the stage and the pools fit
    tight = prepare(GRAPH, PlanOptions(target=one_memory(patched)))[2]
    assert tight.patches is not None and tight.patches.stage is not None
    assert not tight.pools_error
    # room for the graph run whole: no stage looked for, no MACs added
    roomy = prepare(GRAPH, PlanOptions(target=one_memory(whole)))[2]
    assert roomy.patches is None and not roomy.pools_error
    # no board: nothing to fit, nothing patched
    host = prepare(GRAPH, PlanOptions())[2]
    assert host.patches is None and host.arena_bytes == roomy.arena_bytes


def test_a_board_without_listed_memories_patches_by_its_ram_size() -> None:
    whole, patched = needs()
    board = MemoryTarget("t", patched, 1 << 20, 0, 0)
    tight = prepare(GRAPH, PlanOptions(target=board))[2]
    assert tight.patches is not None and tight.patches.stage is not None
    roomy = prepare(GRAPH, PlanOptions(target=replace(board, ram_size=whole)))[2]
    assert roomy.patches is None


def test_off_and_too_small_say_so_in_the_pools_error() -> None:
    whole, patched = needs()
    off = prepare(GRAPH, PlanOptions(target=one_memory(patched), patch_overhead=0))[2]
    assert off.patches is None and off.pools_error
    # smaller than even the patched arena: the stage is kept (closest to fitting) and the
    # verdict still says what is missing
    short = prepare(GRAPH, PlanOptions(target=one_memory(patched - 16)))[2]
    assert short.pools_error and short.patches is not None and short.patches.stage is not None


def test_tflm_plan_never_patches() -> None:
    _, patched = needs()
    tflm = prepare(GRAPH, replace(PlanOptions.tflm(), target=one_memory(patched)))[2]
    assert PlanOptions.tflm().patch_overhead == 0
    assert tflm.patches is None and tflm.pools_error


@pytest.mark.parametrize(
    ("given", "fields"),
    [
        (None, {"patch_overhead": DEFAULT_OVERHEAD, "patch_when": "auto"}),
        ("auto", {"patch_overhead": DEFAULT_OVERHEAD, "patch_when": "auto"}),
        ("0.3", {"patch_overhead": 0.3, "patch_when": "always"}),
        ("0", {"patch_overhead": 0.0, "patch_when": "always"}),
    ],
)
def test_the_flag(given: str | None, fields: dict[str, object]) -> None:
    argv = ["plan", "m.tflite"] + (["--patch-overhead", given] if given else [])
    args = _parser().parse_args(argv)
    assert patch_choice(args.patch_overhead) == fields


def test_a_bad_value_is_one_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(["plan", "m.tflite", "--patch-overhead", "lots"])
    assert exc.value.code == 2
    assert "'lots' is neither auto nor a number between 0 and 10" in capsys.readouterr().err


def test_patch_when_is_checked() -> None:
    with pytest.raises(ValueError, match="patch_when is one of auto, always"):
        PlanOptions(patch_when="sometimes")


def test_the_report_counts_the_models_operators_and_the_tiles_beside() -> None:
    """A patched plan's header names the model's operators, the tiles' count beside them (a
    31-operator model once read "143 operators")."""
    from mcugen.report.text import plan_text

    options = PlanOptions(patch_overhead=DEFAULT_OVERHEAD, patch_when="always")
    graph, _, plan = prepare(GRAPH, options)
    assert len(graph.operators) > len(GRAPH.operators) == plan.model_operators
    head = plan_text(graph, plan, "m.tflite").splitlines()[0]
    expected = f"{len(GRAPH.operators)} operators ({len(graph.operators)} with the patch tiles)"
    assert head.startswith(f"m.tflite: {expected}, "), head
