"""Channel concatenation in place: the facts plan/aliasing.py (step 3b) needs to let producers
write straight into their slice of a concatenation along the last axis, and the slices a plan
made (the codegen gives their producers the pixel stride; the reports list them).

An input t of a concatenation whose traits declare `channel_slices` is a *slice candidate* when
its producer's kernel takes an output pixel stride (`strided_output`), t is read by that
concatenation only, once, and is neither a graph input nor output. The candidate at channel
offset c (the last-axis sizes of the inputs before it) starts c * element bytes into the output
and reaches `span` bytes from there: (pixels - 1) * output channels + its own channels, in
elements. TFLM cannot do this (its kernels write dense outputs), so the copy and the inputs'
own buffers disappear; a slice's buffer is the output's, alive from the first producer to the
last reader. Complexity O(operators + tensors). Weakness: a tensor read by anything besides the
concatenation (a DARTS node feeding a later node) stays a copy: its readers would need an input
stride too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from mcugen.model.ir import Graph, Operator, element_size
from mcugen.model.traits import NO_TRAITS, Traits
from mcugen.plan.buffers import Buffer, live_bytes_per_step
from mcugen.plan.order import ORDERS, ArenaOf, OrderResult, peak_of
from mcugen.plan.order.optimal import DEFAULT_TIME_BUDGET


@dataclass(frozen=True)
class SliceCandidate:
    """A concatenation input that may become a slice of its output."""

    tensor: int
    producer: int  # operator index
    concat: int  # operator index
    output: int  # the concatenation's output tensor
    offset: int  # bytes from the output's start to the slice's first element
    span: int  # bytes from there to the slice's last element, at the output's pixel stride
    stride: int  # elements between two pixels: the output's last dimension


@dataclass(frozen=True)
class ChannelSlice:
    """A concatenation input its producer writes in place, at `stride` elements per pixel."""

    tensor: int
    producer: int
    concat: int
    stride: int
    nbytes: int  # the copy the concatenation no longer makes


def slice_candidates(graph: Graph, traits: Traits) -> dict[int, SliceCandidate]:
    """Tensor -> its candidacy, for every concatenation input that may be written in place."""
    producers = {t: op.index for op in graph.operators for t in op.outputs if t >= 0}
    consumers = graph.consumers()
    io = set(graph.inputs) | set(graph.outputs)
    found: dict[int, SliceCandidate] = {}
    for op in graph.operators:
        if not traits.get(op.index, NO_TRAITS).channel_slices or len(op.outputs) != 1:
            continue
        z = graph.tensors[op.outputs[0]]
        if not z.shape or z.nbytes == 0:
            continue
        width = element_size(z.dtype)
        stride = z.shape[-1]
        offset = 0
        for t in op.inputs:
            x = graph.tensors[t]
            p = producers.get(t)
            channels = x.shape[-1] if x.shape else 0
            if (
                p is not None
                and x.nbytes > 0
                and op.inputs.count(t) == 1
                and consumers.get(t) == [op.index]
                and t not in io
                and len(graph.operators[p].outputs) == 1
                and traits.get(p, NO_TRAITS).strided_output
            ):
                pixels = x.num_elements // channels
                span = ((pixels - 1) * stride + channels) * width
                found[t] = SliceCandidate(t, p, op.index, z.index, offset, span, stride)
            offset += channels * width
    return found


def slice_spans(
    graph: Graph, traits: Traits, aliases: Mapping[int, tuple[int, int]] | None
) -> dict[int, int]:
    """Tensor -> span for the candidates `aliases` put at their slice: what
    `buffers.activation_buffers(spans=...)` needs to size their buffer step by step."""
    if not aliases:
        return {}
    return {
        t: c.span
        for t, c in slice_candidates(graph, traits).items()
        if aliases.get(t) == (c.output, c.offset) and c.span != graph.tensors[t].nbytes
    }


def planned_slices(
    graph: Graph, traits: Traits, offsets: Mapping[int, int]
) -> tuple[ChannelSlice, ...]:
    """The candidates a plan's tensor `offsets` put at their slice, with a stride other than
    their own channels (a slice of one pixel, or the whole output, needs none)."""
    return tuple(
        ChannelSlice(t, c.producer, c.concat, c.stride, graph.tensors[t].nbytes)
        for t, c in sorted(slice_candidates(graph, traits).items())
        if t in offsets
        and c.output in offsets
        and offsets[t] == offsets[c.output] + c.offset
        and c.span != graph.tensors[t].nbytes
    )


#: the opcode of the placeholder operators `order_graph` adds (never lowered: orders only)
HOST_OPCODE = "MCUGEN_SLICE_HOST"


def order_graph(graph: Graph, found: Mapping[int, SliceCandidate]) -> Graph | None:
    """`graph` as the order strategies should see it when the `found` candidates are written in
    place (None: no candidate): each concatenation with candidates gets a placeholder operator
    (appended after the graph's, no inputs) whose output, the size of the concatenation's
    output, every candidate's producer, the concatenation and its output's readers read; the
    candidates and the concatenation's output take no bytes (a graph output keeps its bytes, the
    placeholder's output lives to the end instead). So the output's bytes are live from the first
    producer to the last reader, as step 3b's buffer, and the strategies order for that. Drop
    the placeholders' indices (>= the graph's operator count) from an order found on it."""
    concats = sorted({c.concat for c in found.values()})
    if not concats:
        return None
    tensors = list(graph.tensors)
    operators = list(graph.operators)
    extra_inputs: dict[int, list[int]] = {}
    outputs = list(graph.outputs)
    consumers = graph.consumers()
    for c in concats:
        z = graph.tensors[graph.operators[c].outputs[0]]
        host = len(tensors)
        tensors.append(replace(z, index=host, name=f"{z.name} (slices' host)", data=None))
        operators.append(Operator(len(operators), HOST_OPCODE, 1, (), (host,)))
        readers = [c, *consumers.get(z.index, [])]
        readers += [s.producer for s in found.values() if s.concat == c]
        for op_index in readers:
            extra_inputs.setdefault(op_index, []).append(host)
        if z.index in graph.outputs:
            outputs.append(host)
        else:
            tensors[z.index] = replace(z, shape=(0,))
    for t in found:
        tensors[t] = replace(tensors[t], shape=(0,))
    for op_index, extra in extra_inputs.items():
        op = operators[op_index]
        operators[op_index] = replace(op, inputs=(*op.inputs, *extra))
    return replace(
        graph, tensors=tuple(tensors), operators=tuple(operators), outputs=tuple(outputs)
    )


#: `candidate_sets` leaves out, besides trying all, the candidates whose producer reads a tensor
#: this many times their size or more (an Inception pool branch: the pooled map, as large as the
#: block's input, would coexist with the output if its 1x1 convolution wrote in place)
READ_RATIOS = (3, 2)


def candidate_sets(
    graph: Graph, found: Mapping[int, SliceCandidate]
) -> list[dict[int, SliceCandidate]]:
    """The distinct sets of candidates `order_graph` orders for, all of them first: written in
    place, a slice's concatenation output lives from its producer on, which does not pay where
    that producer reads a much larger tensor (it could run before the output exists)."""
    sets = [dict(found)]
    for ratio in READ_RATIOS:
        kept = {
            t: c
            for t, c in found.items()
            if all(
                graph.tensors[x].nbytes < ratio * graph.tensors[t].nbytes
                for x in graph.operators[c.producer].inputs
                if x >= 0 and not graph.tensors[x].is_constant
            )
        }
        if kept and kept not in sets:
            sets.append(kept)
    return sets


#: the share of the optimal order's budget each search of `slice_order` gets (at 0.5 nas_cells8
#: keeps its copies: 20,480 B instead of 19,584)
SEARCH_SHARE = 1.0


def slice_order(
    graph: Graph,
    scratch: Mapping[int, int] | None,
    traits: Traits,
    time_budget: float | None,
    evaluate: ArenaOf,
    result: OrderResult,
    buffers_of: Callable[[tuple[int, ...]], Sequence[Buffer]],
    floor_of: Callable[[tuple[int, ...]], int],
) -> OrderResult:
    """`result` (the default order strategy's), or the optimal order of `graph` as it is when
    each of `candidate_sets` is written in place (`order_graph`) when its arena (`evaluate`) is
    smaller: the other strategies order for copies, whose inputs coexist with the output. Only
    tried when a candidate or its concatenation's output is live at a peak step of `result`'s
    plan (`buffers_of`: its buffers), so the search's work goes where the peak is; an order
    whose smallest shared peak (`floor_of`, no layout) is not below the best arena is not laid
    out.
    Complexity: one optimal-order search and at most one layout per
    candidate set (at most 3)."""
    every = slice_candidates(graph, traits)
    if not every or not _at_peak(every, buffers_of(result.order), len(result.order)):
        return result
    best = (evaluate(result.order, None)[0], result.order)
    for found in candidate_sets(graph, every):
        shaped = order_graph(graph, found)
        if shaped is None:
            continue
        budget = (DEFAULT_TIME_BUDGET if time_budget is None else time_budget) * SEARCH_SHARE
        searched = ORDERS["optimal"](shaped, scratch=scratch, time_budget=budget)
        order = tuple(i for i in searched.order if i < len(graph.operators))
        if order == best[1] or floor_of(order) >= best[0]:
            continue
        arena = evaluate(order, time_budget, best[0])[0]
        best = (arena, order) if arena < best[0] else best
    if best[1] == result.order:
        return result
    peak = peak_of(graph, best[1], scratch)
    return replace(
        result,
        order=best[1],
        peak_live_bytes=peak,
        proven_optimal=peak <= result.lower_bound,
        chosen="optimal, ordered for concatenations in place",
    )


def _at_peak(found: Mapping[int, SliceCandidate], buffers: Sequence[Buffer], steps: int) -> bool:
    """A candidate or its concatenation's output is in a buffer live at a step of peak bytes."""
    live = live_bytes_per_step(buffers, steps)
    peak = max(live, default=0)
    wanted = set(found) | {c.output for c in found.values()}
    return any(
        live[s] == peak and any(t in wanted for t, _ in b.tensor_placements())
        for b in buffers
        for s in range(b.first, b.last + 1)
    )
