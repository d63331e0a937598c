"""A lower bound on the arena of every plan of a graph: any order, any sharing, any layout.

`plan/order` proves bounds on the peak live bytes of any order when no two tensors share bytes
(what `--order optimal` minimises). Sharing goes below those: a convolution in place over its
input needs the larger of the two, not their sum. This module bounds what sharing leaves: while
an operator runs, its inputs, its outputs and its scratch are all in the arena, and only the
sharing its kernel declares (plain data, `OpTraits`) lets any two of them overlap:
1. Views (RESHAPE and the like) are their input's bytes: every tensor joined to another by a
   chain of views counts once, at the size of the largest (`view_classes`).
2. Per operator, the fewest bytes its operands can take, over the sharings its traits allow:
   nothing shared (the sum); the output over one input it may overwrite, view, grow over or
   stage (the sum less the smaller of the two, plus the staging bytes where the kernel needs
   them); the inputs as blocks or channel slices of the output (the larger of the output and
   the inputs' sum); the output starting `input_after` bytes (aligned) before input 0 (the
   larger of the output and that gap plus the input).
   Its kernel scratch is added (one buffer, rounded up to the arena alignment).
3. The graph's inputs are live together before the first operator, its outputs after the last.
The bound is the largest of these. A shared buffer's profile (`Buffer.profile`) at an
operator's step reaches the larger of its input and output, so every layout, with or without
profiles, and every order and aliasing choice of `plan/aliasing.py` lies at or above it;
`MemoryPlan.validate` checks that it does. With `aliases` fixed by the caller, operands in one
alias group count as the group's reach over them instead of step 2's choices.
Complexity O(operator inputs and outputs). Weakness: it looks at one operator at a time, so it
is below the best plan wherever tensors that no operator touches together stay live across
it (long skip connections), and it counts no patch stage a graph could still be tiled by.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mcugen.model.ir import Graph, Operator
from mcugen.model.traits import NO_TRAITS, OpTraits, Traits
from mcugen.plan.buffers import align_up

Aliases = Mapping[int, tuple[int, int]]


def arena_lower_bound(
    graph: Graph,
    *,
    scratch: Mapping[int, int] | None = None,
    traits: Traits | None = None,
    aliases: Aliases | None = None,
) -> int:
    """No plan of `graph` with kernel `scratch` has a smaller arena when its tensors share bytes
    only as `traits` allow (None: nothing shared) or exactly as `aliases` say."""
    arena = set(graph.activation_tensors())
    classes = view_classes(graph, traits or {}) if aliases is None else _alias_roots(aliases)
    sizes = {t: graph.tensors[t].nbytes for t in arena}
    best = _distinct_bytes(graph.inputs, arena, sizes, classes)
    best = max(best, _distinct_bytes(graph.outputs, arena, sizes, classes))
    for op in graph.operators:
        kind = (traits or {}).get(op.index, NO_TRAITS)
        kernel = (scratch or {}).get(op.index, 0)
        if aliases is not None:
            operands = (*op.inputs, *op.outputs)
            need = _distinct_bytes(operands, arena, sizes, classes, aliases) + align_up(kernel)
        else:
            need = _fewest_operand_bytes(op, kind, kernel, arena, sizes, classes)
        best = max(best, need)
    return best


def view_classes(graph: Graph, traits: Traits) -> dict[int, int]:
    """Tensor -> the smallest tensor joined to it by views (union-find over view operators)."""
    parent: dict[int, int] = {}

    def find(t: int) -> int:
        while parent.get(t, t) != t:
            parent[t] = parent.get(parent[t], parent[t])
            t = parent[t]
        return t

    for op in graph.operators:
        if traits.get(op.index, NO_TRAITS).view and op.inputs and op.outputs:
            x, y = find(op.inputs[0]), find(op.outputs[0])
            if x >= 0 and y >= 0 and x != y:
                parent[max(x, y)] = min(x, y)
    return {t: find(t) for t in parent}


def _alias_roots(aliases: Aliases) -> dict[int, int]:
    roots = {}
    for t in aliases:
        root = t
        for _ in range(len(aliases) + 1):
            if root not in aliases:
                break
            root = aliases[root][0]
        roots[t] = root
    return roots


def _distinct_bytes(
    tensors: Iterable[int],
    arena: set[int],
    sizes: Mapping[int, int],
    classes: Mapping[int, int],
    aliases: Aliases | None = None,
) -> int:
    """Aligned bytes of `tensors` in the arena, tensors of one class counted once at the reach
    of the largest (its size, or with `aliases` its offset in the group plus its size)."""
    reach: dict[int, int] = {}
    for t in set(tensors):
        if t in arena and sizes[t] > 0:
            root = classes.get(t, t)
            reach[root] = max(reach.get(root, 0), _offset(t, aliases) + sizes[t])
    return sum(align_up(r) for r in reach.values())


def _offset(t: int, aliases: Aliases | None) -> int:
    offset = 0
    for _ in range(len(aliases or {}) + 1):
        if aliases is None or t not in aliases:
            return offset
        t, inner = aliases[t]
        offset += inner
    raise ValueError("alias cycle")


def _fewest_operand_bytes(
    op: Operator,
    kind: OpTraits,
    kernel: int,
    arena: set[int],
    sizes: Mapping[int, int],
    classes: Mapping[int, int],
) -> int:
    """Step 2: the fewest bytes `op`'s operands and scratch take under the sharing `kind`
    declares."""
    alone = _distinct_bytes((*op.inputs, *op.outputs), arena, sizes, classes) + align_up(kernel)
    y = op.outputs[0] if op.outputs else -1
    if y not in arena or sizes[y] == 0:
        return alone
    best = alone
    if kind.input_blocks or kind.channel_slices:
        inputs = _distinct_bytes(op.inputs, arena, sizes, classes)
        others = _distinct_bytes(op.outputs[1:], arena, sizes, classes)
        best = min(best, max(align_up(sizes[y]), inputs) + others + align_up(kernel))
    over: list[tuple[int, int]] = []  # (input index, extra scratch) the output may lie over
    if kind.view or kind.grows_over_input:
        over.append((0, 0))
    over += [(k, 0) for k in kind.overwrites]
    if kind.staging_bytes is not None:
        over.append((0, kind.staging_bytes))
    if kind.input_after is not None and op.inputs and op.inputs[0] in arena:
        x = op.inputs[0]
        gap = align_up(max(kind.input_after, 1))
        if sizes[x] > 0 and classes.get(x, x) != classes.get(y, y) and gap < sizes[y]:
            shared = min(align_up(sizes[x]), align_up(sizes[y]) - gap)
            best = min(best, alone - shared)
    for k, staging in over:
        x = op.inputs[k] if k < len(op.inputs) else -1
        if x not in arena or sizes[x] == 0 or classes.get(x, x) == classes.get(y, y):
            continue
        shared = min(align_up(sizes[x]), align_up(sizes[y]))
        best = min(best, alone - shared - align_up(kernel) + align_up(kernel + staging))
    return best
