"""The sharing choices a plan lays out for one order (memory_plan._lay_out): aliasing is greedy,
so the planner lays out several and keeps the smallest arena. In order: everything its operators
let share, then the same without channel concatenation in place (plan/channel_slices.py), then
both without running convolutions in place, then nothing shared; each distinct choice once. The
choices with slices accept a slice only where no step it raises goes above the peak of the same
choice without slices (`aliases_for(slice_ceiling=...)`). Complexity: five aliasing passes and
their buffers, O(choices x aliasing)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from mcugen.model.ir import Graph
from mcugen.model.traits import Traits
from mcugen.plan.aliasing import aliases_for
from mcugen.plan.buffers import Buffer, activation_buffers, live_bytes_per_step
from mcugen.plan.channel_slices import slice_candidates, slice_spans
from mcugen.plan.memo import Same, recall
from mcugen.plan.staging import staging_scratch

Aliases = Mapping[int, tuple[int, int]]


#: (peak live bytes, choice number, buffers) of one sharing choice.
Choice = tuple[int, int, tuple[Buffer, ...]]


def sharing_candidates(
    graph: Graph,
    order: tuple[int, ...],
    scratch: Mapping[int, int] | None,
    aliases: Aliases | None,
    in_place: bool,
    traits: Traits,
    profiles: bool,
) -> tuple[tuple[Choice, ...], int]:
    """(peak live bytes, choice, buffers) of each distinct sharing choice `_lay_out` tries, and
    how many choices there were (the layout budget is split among them); recalled inside
    `plan.memo.remembering()` (the kernel choice bounds a trial by them, then lays them out)."""
    key = (
        "sharing",
        Same(graph.tensors),
        Same(graph.operators),
        graph.inputs,
        graph.outputs,
        tuple(order),
        None if scratch is None else tuple(sorted(scratch.items())),
        None if aliases is None else tuple(sorted(aliases.items())),
        in_place,
        tuple(sorted(traits.items())),
        profiles,
    )
    return recall(
        key,
        lambda: _sharing_candidates(graph, order, scratch, aliases, in_place, traits, profiles),
    )


def _sharing_candidates(
    graph: Graph,
    order: tuple[int, ...],
    scratch: Mapping[int, int] | None,
    aliases: Aliases | None,
    in_place: bool,
    traits: Traits,
    profiles: bool,
) -> tuple[tuple[Choice, ...], int]:
    choices: list[Aliases | None] = [aliases]
    tries = 1
    if aliases is None and in_place:
        # with channel concatenation in place (plan/channel_slices.py) first, then without it:
        # kept only where its arena is no larger; the layout budget is split as without it
        choices = []
        slices = bool(slice_candidates(graph, traits))
        alias = partial(aliases_for, graph, order, traits, scratch=scratch, profiles=profiles)
        # steps 5 and 7 of plan/aliasing.py on, step 7 off, both off: greedy choices at one
        # operator can block better ones later (a concatenation's slices after an overlap)
        for convolutions, overlap in ((True, True), (True, False), (False, False)):
            copied = alias(convolutions=convolutions, overlap=overlap, channel_slices=False)
            if not slices:
                choices += [copied, copied]
                continue
            ceiling = _peak(graph, order, scratch, traits, copied, profiles)
            sliced = alias(convolutions=convolutions, overlap=overlap, slice_ceiling=ceiling)
            choices += [sliced, copied]
        tries = len(_distinct([choices[1], choices[3], choices[5], None]))
        choices = _distinct([*choices, None])
    candidates = []
    for k, choice in enumerate(choices):
        buffers = _buffers(graph, order, scratch, traits, choice, profiles)
        candidates.append((max(live_bytes_per_step(buffers, len(order)), default=0), k, buffers))
    return tuple(candidates), tries


def _buffers(
    graph: Graph,
    order: tuple[int, ...],
    scratch: Mapping[int, int] | None,
    traits: Traits,
    choice: Aliases | None,
    profiles: bool,
) -> tuple[Buffer, ...]:
    """The buffers of one sharing choice, with its staging and its slices' spans."""
    with_staging = staging_scratch(graph, choice, scratch, traits) if choice else scratch
    spans = slice_spans(graph, traits, choice)
    return activation_buffers(graph, order, with_staging, choice, profiles=profiles, spans=spans)


def _peak(
    graph: Graph,
    order: tuple[int, ...],
    scratch: Mapping[int, int] | None,
    traits: Traits,
    choice: Aliases,
    profiles: bool,
) -> int:
    buffers = _buffers(graph, order, scratch, traits, choice, profiles)
    return max(live_bytes_per_step(buffers, len(order)), default=0)


def _distinct(choices: list[Aliases | None]) -> list[Aliases | None]:
    return [c for k, c in enumerate(choices) if c not in choices[:k]]
