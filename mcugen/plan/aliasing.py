"""Which tensors share storage for a given operator order: views, in-place operators and
concatenations whose producers write straight into the concatenated buffer.

The result is the `aliases` mapping `tensor -> (host tensor, byte offset)` that
`buffers.activation_buffers` (and `memory_plan.plan_memory(aliases=...)`) consume: all tensors of
one alias group live in one buffer whose lifetime is the union of theirs.

Steps (one pass over the operators in the given order; SERENITY, Ahn et al. 2020, section 3.3 calls
the last two "identity graph rewriting"; TFLM does the first for RESHAPE only):
What each operator allows is plain data its lowering declares (`OpTraits`, mcugen/model/traits.py,
handed over as `traits`: operator index -> traits); this module names no operator.
1. Views (`view`: RESHAPE, SQUEEZE, EXPAND_DIMS copy bytes unchanged), so the output aliases its
   input at offset 0 (the kernel skips its copy when the pointers are equal). Views never write, so
   they are allowed on graph inputs and outputs too; a non-constant input is required, which the
   operator reads through no other operand (step 5 requires the same).
2. In place (`overwrites`: the element-wise kernels). The output goes over input k when: the
   input has as many elements as the output and the same element size (so it is not broadcast and
   element i of both occupies the same bytes), every tensor of the input's group is last used at
   this step, no tensor of that group is a graph input or output, and no other input of the operator
   lives in that group. Which input dies where depends on the order, hence
   `aliases_for(graph, order, traits)`.
3. Concatenation as a no-op (`input_blocks`: each input is one contiguous block of the output, as
   CONCATENATION when every output dimension before the axis is 1). An input whose whole group is
   produced by operators, used by nothing after this step, holds no graph input or output, and fits
   exactly the input's bytes is moved into the output's buffer at its block's offset; its producer
   then writes in place and the kernel skips the copy. The merged buffer lives from the first
   producer to the last consumer of the output, which can raise the peak between the producers, so
   each input is accepted only when the peak live bytes do not grow (a tie is accepted: it can
   enable an enclosing concatenation).

3b. Channel concatenation in place (`channel_slices`, plan/channel_slices.py): an input whose
   producer's kernel takes an output pixel stride (`strided_output`), read by this operator
   only, goes into the output's buffer at its channel offset, so its producer writes its pixels
   at the output's stride and the kernel skips its copy. Its producer then never runs in place
   over its own input (steps 2, 4 and 5 leave such outputs alone), and, as in step 3, the
   slices are accepted together, else one by one, when the peak live bytes do not grow. The
   planner lays out the choice without this step too and keeps the smaller arena
   (memory_plan._candidates).

4. Growing in place (`grows_over_input`: PAD writes its output from the last byte to the first,
   and each output element lies at or after the input element it copies when the input starts the
   output's buffer); so an operator whose input dies there (conditions as in step 2) gets its
   input's buffer, grown to the output's size. The grown buffer exists from the input's producer
   on, so, as in step 3, this is accepted only when the peak live bytes do not grow.

5. In place with staging (`staging_bytes`: TinyEngine's in-place depthwise, Lin et al. 2020, and
   its pointwise analogue, mcugen/codegen/lower/conv_2d.py). The output goes over an input that
   dies there when the kernel can stage what it still needs in a small scratch of the declared
   size. Without `profiles` the shared buffer has the larger size for the lifetimes of both; with
   them it is the input's size until the output is born and the output's after the input dies
   (`Buffer.profile`, which the layouts pack run by run). Either way this is accepted only when
   the peak live bytes (staging scratch included) do not grow. `staging_scratch` adds the staging
   bytes to the operator's scratch for the chosen aliases; `convolutions=False` leaves this step
   out (an early choice here can block a better one later, so the planner tries both).

6. A patch stage's input under its end (`reads_window` loads, `writes_window` stores; plan/
   stage_overlap.py): the input goes the computed distance into the end's buffer, so the end's
   first rows take the input's rows no later tile reads, when nothing else shares the end's
   buffer while the input lives and the peak live bytes do not grow.

7. Output before its input (`input_after`, mcugen/model/overlap.py): an input that dies here and
   is its buffer's only live bytes goes that far (aligned, at least one unit) into the output's
   buffer, when step 5 shared nothing and the peak live bytes do not grow; graph inputs may be
   overwritten (dead after this step, as TFLM reuses them), graph outputs never.

Complexity: steps 1-2 O(operators x group size); steps 3-4 re-evaluate live bytes for each
candidate, O(candidates x (tensors + steps x buffers)). Weaknesses: greedy in the order of the
operators (an early in-place choice can block a later, better concatenation), conservative on graph
inputs/outputs, and judged on live bytes rather than on the arena a layout reaches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcugen.model.ir import Graph, Operator, element_size
from mcugen.model.traits import NO_TRAITS, Traits
from mcugen.plan.alias_groups import Aliases, Groups, no_worse
from mcugen.plan.buffers import (
    activation_buffers,
    align_up,
    live_bytes_per_step,
    tensor_lifetimes,
)
from mcugen.plan.channel_slices import SliceCandidate, slice_candidates
from mcugen.plan.stage_overlap import StageOverlap, stage_overlaps
from mcugen.plan.staging import staging_scratch


def aliases_for(
    graph: Graph,
    order: Sequence[int],
    traits: Traits,
    *,
    views: bool = True,
    in_place: bool = True,
    concatenation: bool = True,
    convolutions: bool = True,
    channel_slices: bool = True,
    scratch: Mapping[int, int] | None = None,
    profiles: bool = False,
    slice_ceiling: int | None = None,
    overlap: bool = True,
) -> Aliases:
    """Tensor -> (host tensor, byte offset) for the order `order`, with what each operator's
    `traits` allow; see the module docstring.
    `scratch` (operator -> bytes) only sharpens the peak comparisons of steps 3 to 5; with
    `profiles` they count a shared buffer's bytes as its live members reach them step by step
    (the layout then packs `Buffer.profile`s), else its full size over its whole lifetime.
    Without `overlap`, step 7 is left out (its early choices can block concatenations in place;
    `convolutions=False` leaves steps 5 and 7 out)."""
    arena = set(graph.activation_tensors())
    groups = Groups(graph, tensor_lifetimes(graph, order), scratch=scratch or {}, profiles=profiles)
    slices = slice_candidates(graph, traits) if concatenation and channel_slices else {}
    for step, op_index in enumerate(order, start=1):
        op = graph.operators[op_index]
        kind = traits.get(op_index, NO_TRAITS)
        if slices and len(op.outputs) == 1 and op.outputs[0] in slices and not kind.view:
            continue  # it may write its output into a concatenation's slice (step 3b)
        if views and kind.view:
            _alias_view(graph, op, arena, groups)
        elif in_place and kind.overwrites:
            _alias_in_place(graph, op, kind.overwrites, step, arena, groups)
        elif concatenation and kind.input_blocks:
            _alias_concatenation(graph, order, op, step, arena, groups)
        elif slices and kind.channel_slices:
            found = [slices[t] for t in op.inputs if t in slices]
            _alias_slices(order, found, arena, groups, slice_ceiling)
        elif in_place and kind.grows_over_input:
            _alias_pad(graph, order, op, step, arena, groups)
        elif in_place and convolutions and kind.staging_bytes is not None:
            _alias_conv(graph, order, op, kind.staging_bytes, step, arena, groups)
        if in_place and convolutions and overlap and kind.input_after is not None:
            _alias_overlap(graph, order, op, kind.input_after, step, arena, groups)
    if in_place:
        for stage in stage_overlaps(graph, order, traits):
            _alias_stage_input(graph, order, stage, arena, groups)
    return dict(sorted(groups.aliases.items()))


def _alias_stage_input(
    graph: Graph, order: Sequence[int], overlap: StageOverlap, arena: set[int], groups: Groups
) -> None:
    """A patch stage's input goes `overlap.offset` bytes into its end's buffer (step 6), with
    the buffer it shares (whose other tensors must die before the end's first store), when
    everything else in the end's buffer is born after the input's last read and the peak live
    bytes do not grow."""
    x, part = overlap.tensor, overlap.first_part
    if x not in arena or part not in arena:
        return
    root, at = groups.root(x)
    if groups.root(part)[0] == root or overlap.offset < at:
        return
    born = groups.life[part][0]
    if any(m != x and groups.life[m][1] >= born for m, _ in groups.group(root)):
        return
    last_read = groups.life[x][1]
    chain = {t for t, _ in groups.group(part) if groups.life[t][0] <= last_read}
    stores = {
        op.outputs[0]
        for op in graph.operators
        if op.outputs and op.outputs[0] in chain and op.inputs and op.inputs[0] in chain | {-1}
    }
    if chain - stores:
        return  # something other than the stores' parts lives there while the input does
    if no_worse(graph, order, groups, root, part, overlap.offset - at):
        groups.place(root, part, overlap.offset - at)


def shared_peak(
    graph: Graph,
    order: Sequence[int],
    traits: Traits,
    *,
    scratch: Mapping[int, int] | None = None,
    profiles: bool = False,
) -> int:
    """Peak live bytes of `order` with everything `traits` let share (staging included, kernel
    `scratch` when given, buffer profiles with `profiles`): how a proposed rewrite or a patch
    candidate is judged. Without channel concatenation in place (step 3b), which reserves its
    producers' outputs and is only kept by the planner where it lays out smaller: judged with
    it, a candidate could look worse than the plan that will run it."""
    aliases = aliases_for(
        graph, order, traits, scratch=scratch, profiles=profiles, channel_slices=False
    )
    with_staging = staging_scratch(graph, aliases, scratch, traits)
    buffers = activation_buffers(graph, order, with_staging, aliases, profiles=profiles)
    return max(live_bytes_per_step(buffers, len(order)), default=0)


def _alias_conv(
    graph: Graph,
    order: Sequence[int],
    op: Operator,
    staging: int,
    step: int,
    arena: set[int],
    groups: Groups,
) -> None:
    """The operator writes over its input with `staging` bytes of scratch (step 5) when that does
    not raise the peak."""
    if staging > 0 and groups.scratch.get(op.index, 0) > 0:
        return  # a kernel scratch of its own would share the scratch pointer with the staging
    x, y = op.inputs[0], op.outputs[0]
    if x not in arena or y not in arena or y in groups.aliases or x in graph.outputs:
        return
    if x in op.inputs[1:]:
        return  # the kernel reads the input again through another operand
    if not groups.dead_after(x, step) or groups.touches_io(x, step):
        return
    grows = graph.tensors[y].nbytes > graph.tensors[x].nbytes
    if grows and (groups.root(x)[1] != 0 or groups.extent(x, step) != graph.tensors[x].nbytes):
        return  # the output would run over whatever follows the input in its buffer
    if no_worse(graph, order, groups, y, x, 0, staging=(op.index, staging)):
        groups.place(y, x, 0)
        groups.stage(order, op.index, staging)


def _alias_overlap(
    graph: Graph,
    order: Sequence[int],
    op: Operator,
    distance: int,
    step: int,
    arena: set[int],
    groups: Groups,
) -> None:
    """Step 7: the output starts `distance` bytes (aligned up) before its input in one buffer,
    when the input dies here, is its buffer's only bytes, and the peak does not grow."""
    if len(op.outputs) != 1 or not op.inputs:
        return
    x, y = op.inputs[0], op.outputs[0]
    if x not in arena or y not in arena or y in groups.aliases or x in op.inputs[1:]:
        return
    if y in graph.outputs or groups.root(y) != (y, 0) or len(groups.group(y)) != 1:
        return  # already shared (step 5 took it) or a graph output
    nbytes, members = graph.tensors[x].nbytes, groups.group(x)
    if groups.root(x)[1] != 0 or groups.extent(x, step) != nbytes or not groups.dead_after(x, step):
        return
    if any(m in graph.outputs for m, _ in members):
        return
    gap = align_up(max(distance, 1))  # equal addresses mean "in place with staging"
    root = groups.root(x)[0]  # x lies at its start (offset 0 above)
    if gap < graph.tensors[y].nbytes and no_worse(graph, order, groups, root, y, gap):
        groups.place(root, y, gap)


def _alias_view(graph: Graph, op: Operator, arena: set[int], groups: Groups) -> None:
    if not op.inputs or len(op.outputs) != 1:
        return
    x, y = op.inputs[0], op.outputs[0]
    if x not in arena or y not in arena or x == y or y in groups.aliases or x in op.inputs[1:]:
        return
    nbytes = graph.tensors[x].nbytes
    if nbytes == 0 or nbytes != graph.tensors[y].nbytes:
        return
    groups.place(y, x, 0)


def _alias_in_place(
    graph: Graph,
    op: Operator,
    overwrites: tuple[int, ...],
    step: int,
    arena: set[int],
    groups: Groups,
) -> None:
    if len(op.outputs) != 1:
        return
    y = op.outputs[0]
    out = graph.tensors[y]
    if y not in arena or out.nbytes == 0 or y in groups.aliases:
        return
    for k in overwrites:
        if k >= len(op.inputs) or op.inputs[k] not in arena:
            continue
        x = op.inputs[k]
        src = graph.tensors[x]
        if src.num_elements != out.num_elements:
            continue
        if element_size(src.dtype) != element_size(out.dtype):
            continue
        if not groups.dead_after(x, step) or groups.touches_io(x, step):
            continue
        mine = groups.root(x)[0]
        others = [t for j, t in enumerate(op.inputs) if j != k and t >= 0 and t in arena]
        if any(groups.root(t)[0] == mine for t in others):
            continue
        groups.place(y, x, 0)
        return


def _alias_pad(
    graph: Graph, order: Sequence[int], op: Operator, step: int, arena: set[int], groups: Groups
) -> None:
    """The PAD output's buffer starts with its input (the kernel writes backwards), when the input
    dies here and the larger buffer does not raise the peak."""
    if len(op.outputs) != 1 or not op.inputs:
        return
    x, y = op.inputs[0], op.outputs[0]
    if x not in arena or y not in arena or y in groups.aliases:
        return
    src, out = graph.tensors[x], graph.tensors[y]
    if src.nbytes == 0 or src.dtype != out.dtype or out.nbytes < src.nbytes:
        return
    if groups.root(x)[1] != 0 or groups.extent(x, step) != src.nbytes:
        return
    if not groups.dead_after(x, step) or groups.touches_io(x, step):
        return
    mine = groups.root(x)[0]
    if any(t in arena and groups.root(t)[0] == mine for t in op.inputs[1:]):
        return
    if no_worse(graph, order, groups, y, x, 0):
        groups.place(y, x, 0)


def _alias_concatenation(
    graph: Graph, order: Sequence[int], op: Operator, step: int, arena: set[int], groups: Groups
) -> None:
    if len(op.outputs) != 1 or op.outputs[0] not in arena:
        return
    z = op.outputs[0]
    consumers = graph.consumers()
    roots = [groups.root(t)[0] if t in arena else -1 for t in op.inputs]
    offset = 0
    candidates: list[tuple[int, int]] = []
    for k, t in enumerate(op.inputs):
        nbytes = graph.tensors[t].nbytes
        if (
            t in arena
            and nbytes > 0
            and roots.count(roots[k]) == 1
            and consumers.get(t) == [op.index]
            and groups.root(t)[1] == 0
            and groups.extent(t) == nbytes
            and groups.dead_after(t, step)
            and not groups.touches_io(t, step)
        ):
            candidates.append((roots[k], offset))
        offset += nbytes
    # All blocks together first: one block alone can raise the peak (the output then lives
    # from that block's producer on, beside the other blocks and their producers' scratch)
    # where moving every block lowers it.
    trial = groups.copy()
    for root, at in candidates:
        trial.place(root, z, at)
    if len(candidates) > 1 and max(trial.profile(order), default=0) <= max(
        groups.profile(order), default=0
    ):
        for root, at in candidates:
            groups.place(root, z, at)
        return
    for root, at in candidates:
        if no_worse(graph, order, groups, root, z, at):
            groups.place(root, z, at)


def _alias_slices(
    order: Sequence[int],
    found: list[SliceCandidate],
    arena: set[int],
    groups: Groups,
    ceiling: int | None,
) -> None:
    """Step 3b: the candidates of one concatenation into its output's buffer at their channel
    offsets, all together when that keeps the peak, else each one that keeps it; with
    `ceiling` (the peak of the plan without this step), no step they raise may go above it,
    whatever the peak so far (the steps after this one have not shared yet)."""
    ready = [
        c
        for c in found
        if c.tensor in arena
        and c.output in arena
        and groups.group(c.tensor) == [(c.tensor, 0)]
        and groups.root(c.output) == (c.output, 0)
    ]
    trial = groups.copy()
    for c in ready:
        trial.place(c.tensor, c.output, c.offset, span=c.span)
    if len(ready) > 1 and _fits(trial.profile(order), groups.profile(order), ceiling):
        for c in ready:
            groups.place(c.tensor, c.output, c.offset, span=c.span)
        return
    for c in ready:
        trial = groups.copy()
        trial.place(c.tensor, c.output, c.offset, span=c.span)
        if _fits(trial.profile(order), groups.profile(order), ceiling):
            groups.place(c.tensor, c.output, c.offset, span=c.span)


def _fits(trial: list[int], live: list[int], ceiling: int | None) -> bool:
    """The live bytes `trial` peak no higher than `live`, and, with a `ceiling`, every step
    they raise stays at or below it."""
    if max(trial, default=0) > max(live, default=0):
        return False
    return ceiling is None or all(t <= max(ceiling, v) for t, v in zip(trial, live, strict=True))
