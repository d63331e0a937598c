"""`@rung(name, *opcodes)`: `_variants.variant` whose `handles` (the shapes the variant takes, in
words, as `mcugen ops` lists them) is the first paragraph of the decorated select function's
docstring, its last full stop dropped, so that one text says it (the optimised variants of
opt_conv_2d.py, opt_conv_lean.py, opt_direct.py, opt_lean.py, opt_mat_mult.py, opt_add.py)."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from mcugen.codegen.lower._variants import Select, variant


def rung(
    name: str, *opcodes: str, cores: frozenset[str] | None = None
) -> Callable[[Select], Select]:
    """Register the decorated select function as variant `name` of `opcodes` (`variant`)."""

    def wrap(fn: Select) -> Select:
        handles = " ".join((inspect.getdoc(fn) or "").split("\n\n", 1)[0].split()).rstrip(".")
        assert handles, f"{name}: the docstring's first paragraph says what it handles"
        return variant(name, *opcodes, handles=handles, cores=cores)(fn)

    return wrap
