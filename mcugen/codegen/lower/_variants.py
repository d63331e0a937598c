"""Optimised kernel variants: which implementation runs each operator, chosen at build time.

A variant (runtime_c/kernels/opt/) computes exactly what the reference kernel computes, faster,
for the shapes it declares. It is registered with the opcodes it serves, the cores it is written
for (None: any core; the DSP intrinsics of mcu/simd.h fall back to plain C elsewhere, with the
same results) and a one-line statement of the shapes it handles; its `select` gets the operator
and its reference lowering and returns the variant's lowering (its function, parameters laid out
for it, its scratch), or None when the shape is not one it handles. The first registered variant
that accepts an operator wins; otherwise the reference kernel runs. Selection is data: the
view-model records the variant of every operator, and the profile prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcugen.model.ir import Graph, Operator

if TYPE_CHECKING:
    from mcugen.codegen.lower import Lowered

Select = Callable[[Graph, Operator, "Lowered"], "Lowered | None"]

#: How kernels are chosen (mcugen/kernel_choice.py): "auto" as "memory" where the plan does not
#: fit the board's RAM, elsewhere as "memory" when that costs little, else as "opt"; "opt" the
#: fastest variant of every layer; "memory" the fastest that keep the arena at the reference
#: kernels'; "reference" the reference kernels only.
KERNEL_CHOICES = ("auto", "opt", "memory", "reference")


@dataclass(frozen=True)
class Variant:
    name: str
    opcodes: tuple[str, ...]
    cores: frozenset[str] | None  # cores it is written for; None: any
    handles: str  # the shapes it takes, in words
    select: Select


VARIANTS: list[Variant] = []


def variant(
    name: str, *opcodes: str, handles: str, cores: frozenset[str] | None = None
) -> Callable[[Select], Select]:
    """Register the decorated `select(graph, op, reference) -> Lowered | None` as variant `name`
    of `opcodes`."""

    def wrap(fn: Select) -> Select:
        VARIANTS.append(Variant(name, opcodes, cores, handles, fn))
        return fn

    return wrap


def variants_for(opcode: str, core: str) -> list[Variant]:
    """The variants of `opcode` that may run on `core`, in registration order."""
    return [v for v in VARIANTS if opcode in v.opcodes and (v.cores is None or core in v.cores)]
