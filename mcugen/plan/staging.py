"""Staging scratch of operators that run in place (aliasing.py step 5).

A kernel that can write its output over its input declares the scratch it then needs
(`OpTraits.staging_bytes`, from its lowering); this adds it to the operators' scratch for the
aliases chosen. Pure, O(operators).
"""

from __future__ import annotations

from collections.abc import Mapping

from mcugen.model.ir import Graph
from mcugen.model.traits import Traits


def staging_scratch(
    graph: Graph,
    aliases: Mapping[int, tuple[int, int]],
    scratch: Mapping[int, int] | None,
    traits: Traits,
) -> dict[int, int]:
    """`scratch` plus the staging bytes of every operator that `aliases` runs in place."""
    total = dict(scratch or {})
    for index, kind in traits.items():
        op = graph.operators[index]
        if kind.staging_bytes is None or not op.inputs or not op.outputs:
            continue
        if aliases.get(op.outputs[0]) == (op.inputs[0], 0):
            total[index] = total.get(index, 0) + kind.staging_bytes
    return total
