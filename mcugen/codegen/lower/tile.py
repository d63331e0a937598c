"""mcugen's own operators of patch stages (mcugen/model/patch_rewrite.py), never in a .tflite:
`McugenTileLoad` copies a tile's input window out of a whole tensor, `McugenTileStore` writes a
tile into its box of the whole tensor. Both copy bytes, so any element type is exact."""

from __future__ import annotations

from mcugen.codegen.lower import Lowered, register
from mcugen.codegen.lower._common import ANY_TYPE, check_operands, invalid, out, req
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.patch_rewrite import TILE_LOAD, TILE_STORE
from mcugen.model.traits import OpTraits

PARAMS = "mcu_tile_params_t"


def _box(op: Operator, whole: Tensor, tile: Tensor) -> tuple[tuple[str, int], ...]:
    """(y, x) of the tile's box, checked inside the whole tensor (batch 1, NHWC, one type)."""
    y, x = int(op.options.get("y", -1)), int(op.options.get("x", -1))
    if len(whole.shape) != 4 or len(tile.shape) != 4 or whole.shape[0] != 1 or tile.shape[0] != 1:
        raise invalid(op, f"tile {tile.shape} and tensor {whole.shape} must be NHWC, batch 1")
    if whole.dtype != tile.dtype or whole.shape[3] != tile.shape[3]:
        raise invalid(op, "tile and tensor differ in type or channels")
    if y < 0 or x < 0 or y + tile.shape[1] > whole.shape[1] or x + tile.shape[2] > whole.shape[2]:
        raise invalid(op, f"tile {tile.shape} at ({y}, {x}) is not inside {whole.shape}")
    return (("y", y), ("x", x))


def load_traits(graph: Graph, op: Operator) -> OpTraits:
    """The load reads only its window of the whole tensor."""
    return OpTraits(reads_window=_corner(op))


def store_traits(graph: Graph, op: Operator) -> OpTraits:
    """The whole tensor so far (input 0) may be the output's bytes: element i is kept or
    replaced, and only the tile's window is written."""
    return OpTraits(overwrites=(0,), writes_window=_corner(op))


def _corner(op: Operator) -> tuple[int, int] | None:
    y, x = int(op.options.get("y", -1)), int(op.options.get("x", -1))
    return (y, x) if y >= 0 and x >= 0 else None


@register(f"CUSTOM:{TILE_LOAD}", traits=load_traits, types=ANY_TYPE)
def lower_tile_load(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (1,))
    params = _box(op, req(graph, op, 0), out(graph, op))
    return Lowered("tile_load", "mcu_tile_load", PARAMS, params)


@register(f"CUSTOM:{TILE_STORE}", traits=store_traits, types=ANY_TYPE, data_input=1)
def lower_tile_store(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (2,))
    whole, tile = out(graph, op), req(graph, op, 1)
    params = _box(op, whole, tile)
    if op.inputs[0] >= 0 and graph.tensors[op.inputs[0]].shape != whole.shape:
        raise invalid(op, "input 0 is not the whole tensor")
    return Lowered("tile_store", "mcu_tile_store", PARAMS, params)
