"""Helpers shared by the lowerings of TFLM's signal library (custom operators "CUSTOM:Signal*"):
their FlexBuffer options and the operand checks their Prepare functions make.

TFLM reads a signal operator's options by position in the sorted map (`FlexbufferWrapper`), each
as an int32 of the map's byte width; `options` therefore requires exactly the keys the kernel
knows, scalars that fit int32, and returns them by name.
"""

from __future__ import annotations

from mcugen.codegen.lower._common import check_dtype, check_operands, invalid, out, req, unsupported
from mcugen.model.flexbuffers import SCALARS, FlexBufferError, read_map
from mcugen.model.ir import Graph, Operator, Tensor

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def options(op: Operator, keys: tuple[str, ...]) -> dict[str, int]:
    """The custom options as {key: int32 value}; exactly `keys` (sorted, as FlexBuffers store a
    map) must be there."""
    try:
        entries = read_map(op.custom_options)
    except FlexBufferError as exc:
        raise invalid(op, f"custom options are not a valid FlexBuffer map ({exc})") from None
    found = tuple(key for key, _, _ in entries)
    if found != tuple(sorted(keys)):
        raise unsupported(op, f"custom options hold {list(found)}; expected {sorted(keys)}")
    values = {}
    for key, value, kind in entries:
        if kind not in SCALARS:
            raise unsupported(op, f"option {key} is of FlexBuffer type {kind}, not an integer")
        if not INT32_MIN <= value <= INT32_MAX:
            raise invalid(op, f"option {key} = {value} does not fit int32")
        values[key] = value
    return values


def in_range(op: Operator, name: str, value: int, lo: int, hi: int) -> int:
    """`value` of option `name` within [lo, hi] (a shift the kernel's C would make undefined)."""
    if not lo <= value <= hi:
        raise unsupported(op, f"option {name} = {value} is outside [{lo}, {hi}]")
    return value


def operand(graph: Graph, op: Operator, i: int, dtype: str, rank: int | None = None) -> Tensor:
    """Input `i` of type `dtype` and, when given, rank `rank`."""
    t = req(graph, op, i)
    return _typed(op, t, dtype, rank)


def result(graph: Graph, op: Operator, i: int, dtype: str, rank: int | None = None) -> Tensor:
    """Output `i` of type `dtype` and, when given, rank `rank`."""
    return _typed(op, out(graph, op, i), dtype, rank)


def _typed(op: Operator, t: Tensor, dtype: str, rank: int | None) -> Tensor:
    check_dtype(op, t, dtype)
    if rank is not None and len(t.shape) != rank:
        raise invalid(op, f"tensor {t.index} has rank {len(t.shape)}; the kernel takes {rank}")
    return t


def counts(op: Operator, inputs: int, outputs: int) -> None:
    check_operands(op, (inputs,), (outputs,))
