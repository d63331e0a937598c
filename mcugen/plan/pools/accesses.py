"""How often each arena buffer is touched in one inference: the cost model's access counts.

An estimate, not a trace: each operator reads every input tensor once and writes every output once
(`nbytes` each), its scratch is written and read once, the runner writes the graph inputs and
reads the outputs. Kernels that re-read an input (a convolution's window, an im2col scratch) touch
it more often than this counts, so the model ranks buffers by traffic, not by cycles to the cycle.
O(operators x operands).
"""

from __future__ import annotations

from collections.abc import Sequence

from mcugen.model.ir import Graph
from mcugen.plan.buffers import Buffer
from mcugen.plan.pools.problem import Accesses


def buffer_accesses(
    graph: Graph, order: Sequence[int], buffers: Sequence[Buffer]
) -> dict[int, Accesses]:
    """Buffer id -> bytes read and written per inference by its operators and the runner."""
    home = {t: b.id for b in buffers for t, _ in b.tensor_placements()}
    reads = {b.id: 0 for b in buffers}
    writes = {b.id: 0 for b in buffers}

    def touch(table: dict[int, int], tensor: int) -> None:
        if tensor >= 0 and tensor in home:
            table[home[tensor]] += graph.tensors[tensor].nbytes

    for t in graph.inputs:
        touch(writes, t)
    for index in order:
        op = graph.operators[index]
        for t in op.inputs:
            touch(reads, t)
        for t in op.outputs:
            touch(writes, t)
    for t in graph.outputs:
        touch(reads, t)
    for b in buffers:
        if b.scratch_of >= 0:
            reads[b.id] += b.size
            writes[b.id] += b.size
    return {b.id: Accesses(reads[b.id], writes[b.id]) for b in buffers}
