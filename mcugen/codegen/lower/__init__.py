"""Lowering: one TFLite operator -> the C kernel that runs it and its build-time parameters.

Each module in this package registers lowerings with `@register("OPCODE", ...)`. A lowering is a
pure function `(graph, op) -> Lowered` that checks the operator is supported (raising
`UnsupportedError` naming the operator otherwise) and computes everything TFLM computes in Prepare:
multipliers, shifts, paddings, activation ranges. Kernels then only compute.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from mcugen.errors import UnsupportedError
from mcugen.model.ir import Graph, Operator


@dataclass(frozen=True)
class Array:
    """A constant array parameter; rendered as its own `static const` array."""

    ctype: str  # "int32_t", "float", "int8_t", "int16_t", "uint8_t"
    values: tuple[int | float, ...]


Value = int | float | bool | Array


@dataclass(frozen=True)
class Lowered:
    kernel: str  # file stem: runtime_c/kernels/reference/<kernel>.c, mcu/kernels/<kernel>.h
    function: str  # C eval function, signature mcu_eval_fn
    params_type: str | None = None  # C struct type of the parameters, None if the kernel has none
    params: tuple[tuple[str, Value], ...] = ()
    scratch_bytes: int = 0


Lowering = Callable[[Graph, Operator], Lowered]
LOWERINGS: dict[str, Lowering] = {}
_loaded = False


def register(*opcodes: str) -> Callable[[Lowering], Lowering]:
    def wrap(fn: Lowering) -> Lowering:
        for code in opcodes:
            if code in LOWERINGS:
                raise RuntimeError(f"two lowerings registered for {code}")
            LOWERINGS[code] = fn
        return fn

    return wrap


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True


def supported_opcodes() -> list[str]:
    _load_all()
    return sorted(LOWERINGS)


def lower(graph: Graph, op: Operator) -> Lowered:
    """The kernel call for `op`, or an `UnsupportedError` that names the operator."""
    _load_all()
    if op.custom_code is not None:
        raise UnsupportedError(
            f"{op.label}: custom operators are not supported",
            hint="replace it with builtin operators or run it outside the model",
        )
    fn = LOWERINGS.get(op.opcode)
    if fn is None:
        raise UnsupportedError(
            f"{op.label}: operator {op.opcode} is not supported by the mcugen runtime",
            hint=f"supported: {', '.join(supported_opcodes())}",
        )
    return fn(graph, op)
