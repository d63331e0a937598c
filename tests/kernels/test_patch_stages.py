"""Patch stages (issue 17) bit-exact with TFLM on the host build: chains of convolutions,
depthwise convolutions and pooling run tile by tile over forced grids (odd tile sizes, stride 2,
dilation, SAME padding only at true borders, the reference and the optimised kernels), then
models planned with patches on: MobileNet-like stems written with mcugen's tflite writer and,
when ../shared/models exists, VWW int8 and MobileNetV2 int8."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from mcugen.codegen.lower import Array, op_traits
from mcugen.codegen.vm_nodes import param_vm
from mcugen.codegen.vm_types import ArrayVM
from mcugen.model.ir import Graph
from mcugen.model.patch_rewrite import TILE_LOAD, TILE_STORE, tile_stage
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import Generated, generate
from mcugen.plan.patches import patch_problem
from mcugen.plan.patches.search import axis_tiles
from support import SHARED_MODELS, assert_matches_tflm, mobilenet_stem, sweep
from testgraphs import _Net


@dataclass(frozen=True)
class Chain:
    """A chain model: `layers` of ("conv"|"dw"|"max"|"avg"|"relu", kernel, stride, dilation)."""

    hwc: tuple[int, int, int]
    layers: tuple[tuple[str, int, int, int], ...]
    kernels: str = "opt"


def chain_graph(c: Chain, seed: int = 5) -> Graph:
    net = _Net(seed, "chain")
    x = net.b.input((1, *c.hwc), "int8", scale=1 / 128, zero_point=-3)
    for kind, k, stride, dilation in c.layers:
        if kind in ("conv", "dw"):
            x = net.conv(x, 6, k, stride, relu=True, depthwise=kind == "dw", dilation=dilation)
        elif kind == "relu":
            x = net.relu(x)
        else:
            x = net.pool(x, kind, k, stride)
    return net.finish(x)


def tiled(grid: tuple[int, int], kernels: str = "opt") -> Callable[[Graph], Generated]:
    """Generate the whole chain of a one-chain graph run tile by tile over `grid`."""

    def run(graph: Graph) -> Generated:
        order = tuple(range(len(graph.operators)))
        problem = patch_problem(graph, order, op_traits(graph), [0], 1)
        chain = tuple(i for i in order if i in problem.ops)
        assert len(chain) == len(order)  # every operator of a chain model is tileable
        ops = [problem.ops[i] for i in chain]
        rows, cols = axis_tiles(ops, 0, grid[0]), axis_tiles(ops, 1, grid[1])
        assert rows is not None and cols is not None
        patched = tile_stage(graph, chain, rows, cols)
        opcodes = [op.custom_code for op in patched.operators]
        assert opcodes.count(TILE_STORE) == grid[0] * grid[1]
        assert opcodes.count(TILE_LOAD) <= grid[0] * grid[1]  # none for a tile reading it all
        return generate(patched, options=PlanOptions(kernels=kernels))

    return run


CHAINS = {
    # odd tile sizes: 3 x 2 and 4 x 5 grids over 11 x 13
    "odd": Chain((11, 13, 3), (("conv", 3, 1, 1), ("dw", 3, 1, 1), ("conv", 1, 1, 1))),
    # stride 2 on odd sizes: SAME pads after only, so the last tiles pad and the first do not
    "stride2": Chain((15, 17, 3), (("conv", 3, 2, 1), ("dw", 3, 2, 1), ("avg", 3, 1, 1))),
    # dilation 2 and a pooling window reaching past the borders
    "dilated": Chain((13, 13, 4), (("conv", 3, 1, 2), ("relu", 1, 1, 1), ("max", 3, 2, 1))),
    # 5 x 5 depthwise, stride 2, then a dilated depthwise
    "dw5": Chain((16, 12, 6), (("dw", 5, 2, 1), ("dw", 3, 1, 2), ("conv", 1, 1, 1))),
    # the reference kernels (the oracle) on tiles
    "reference": Chain(
        (12, 10, 3), (("conv", 3, 2, 1), ("dw", 3, 1, 1), ("conv", 1, 1, 1)), "reference"
    ),
}
GRIDS = {
    "odd": ((3, 2), (4, 5)),
    "stride2": ((2, 3), (4, 4)),
    "dilated": ((2, 2), (3, 1)),
    "dw5": ((4, 3), (1, 6)),
    "reference": ((3, 3), (2, 5)),
}


@pytest.mark.parametrize(
    ("name", "grid"), [(n, g) for n, grids in GRIDS.items() for g in grids], ids=str
)
def test_chain_tile_by_tile_matches_tflm(name: str, grid: tuple[int, int]) -> None:
    c = CHAINS[name]
    model = write_model(chain_graph(c))
    assert_matches_tflm(model, samples=2, seed=7, generate_fn=tiled(grid, c.kernels))


def test_tiles_pad_only_at_true_borders() -> None:
    """The tiles of a SAME 3x3 convolution pad on the image's borders and nowhere else."""
    graph = chain_graph(Chain((12, 12, 3), (("conv", 3, 1, 1), ("conv", 3, 1, 1))))
    ops = list(patch_problem(graph, (0, 1), op_traits(graph), [0], 1).ops.values())
    rows = axis_tiles(ops, 0, 3)
    assert rows is not None
    assert [t.pad_before for t in rows] == [(1, 1), (0, 0), (0, 0)]
    assert [t.pad_after for t in rows] == [(0, 0), (0, 0), (1, 1)]
    # halos: the middle tile's first convolution reads two rows more on each side
    assert (rows[1].lo, rows[1].hi) == ((2, 3), (10, 9))


def patched(overhead: float = 0.15) -> Callable[[Graph], Generated]:
    def run(graph: Graph) -> Generated:
        gen = generate(graph, options=PlanOptions(patch_overhead=overhead, patch_when="always"))
        report = gen.plan.patches
        assert report is not None and report.stage is not None, "no patch stage was kept"
        assert gen.plan.arena_bytes < gen.plan.arena_without_patches
        assert report.stage.macs_added <= overhead * report.total_macs
        return gen

    return run


@pytest.mark.parametrize("seed", [1, 2])
def test_mobilenet_stem_with_patches_matches_tflm(seed: int) -> None:
    model = write_model(mobilenet_stem(seed, hw=40 + 8 * seed))
    assert_matches_tflm(model, samples=2, seed=seed, generate_fn=patched())


SHARED = [
    "mlperf_vww_mbv1_int8",
    "tflm_mobilenet_v2_int8",
    "mlperf_ic_resnet8_int8",
    "st_yamnet_aed_int8",
    "mcunet_vww_mixed",
    "tflm_person_detect_int8",
]


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="../shared/models not present")
@pytest.mark.parametrize(
    # the suite: the two MLPerf vision models; benchmarks/sweeps.py all six, and
    # `benchmarks/patches.py --verify` every model with a stage at 3 budgets
    "name",
    sweep(SHARED, lambda name: name in ("mlperf_vww_mbv1_int8", "tflm_person_detect_int8")),
)
def test_shared_model_with_patches_matches_tflm(name: str) -> None:
    model = (SHARED_MODELS / f"{name}.tflite").read_bytes()
    assert_matches_tflm(model, samples=1, seed=3, generate_fn=patched())


def test_stem_output_equals_the_unpatched_run() -> None:
    """Patched and whole runs of one model give the same bytes (besides both matching TFLM)."""
    from mcugen.link.host_run import random_inputs
    from support import mcugen_outputs

    model = write_model(mobilenet_stem(3))
    graph = mobilenet_stem(3)
    inputs = [random_inputs(graph, 11)]
    whole = mcugen_outputs(model, inputs, generate)
    tiles = mcugen_outputs(model, inputs, patched())
    assert all(np.array_equal(a, b) for a, b in zip(whole[0], tiles[0], strict=True))


def test_tiles_share_their_operators_arrays() -> None:
    """The tiles of a stage reference one copy of their operator's multipliers, shifts and bias
    (codegen/vm_nodes.py `param_vm`): no two array parameters of the generated model.c have
    the same type and values, and there are fewer arrays than array parameters."""
    gen = patched()(mobilenet_stem(1, hw=48))
    source = gen.files["model.c"]
    arrays = re.findall(r"static const (\w+) g_op\d+_(\w+)\[\d+\] = \{(.*?)\};", source, re.S)
    keys = [
        (ctype, re.sub(r"\s", "", body))
        for ctype, name, body in arrays
        if name not in ("inputs", "outputs")  # the nodes' tensor lists, not parameters
    ]
    assert len(keys) == len(set(keys))
    references = sum(1 for node in gen.view_model.nodes for p in node.params if p.kind == "array")
    assert len(keys) < references


def test_a_zero_of_another_sign_is_another_array() -> None:
    emitted: dict[tuple[str, str], str] = {}
    arrays: list[ArrayVM] = []
    first = param_vm(1, "bias", Array("float", (0.0, 1.0)), arrays, emitted)
    again = param_vm(2, "bias", Array("float", (0.0, 1.0)), arrays, emitted)
    negative = param_vm(3, "bias", Array("float", (-0.0, 1.0)), arrays, emitted)
    assert first.value == again.value == "g_op1_bias" and negative.value == "g_op3_bias"
    assert [a.symbol for a in arrays] == ["g_op1_bias", "g_op3_bias"]
