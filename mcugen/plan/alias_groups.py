"""Alias groups under construction (plan/aliasing.py): every tensor maps to a root buffer and a
byte offset in it, with the live bytes per step the groups give, kept up to date move by move so
that a rule can ask whether one more sharing makes the peak worse (`no_worse`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mcugen.model.ir import Graph
from mcugen.plan.buffers import (
    activation_buffers,
    align_up,
    group_extent,
    live_bytes_per_step,
)

#: tensor -> (root tensor, byte offset in the root)
Aliases = dict[int, tuple[int, int]]


@dataclass
class Groups:
    """Alias groups under construction: every tensor maps to (root, byte offset in the root)."""

    graph: Graph
    life: dict[int, tuple[int, int]]
    scratch: Mapping[int, int] = field(default_factory=dict)
    staging: dict[int, int] = field(default_factory=dict)  # in-place convolutions' scratch
    aliases: Aliases = field(default_factory=dict)
    profiles: bool = False  # buffers' bytes follow their live members (buffers.group_extent)
    _profile: list[int] | None = None
    members: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    #: bytes a channel slice's data spans from its offset (its pixels at the concatenation's
    #: stride), for the slices placed so far; others span their own bytes
    spans: dict[int, int] = field(default_factory=dict)

    def root(self, t: int) -> tuple[int, int]:
        offset = 0
        while t in self.aliases:
            t, inner = self.aliases[t]
            offset += inner
        return t, offset

    def group(self, t: int) -> list[tuple[int, int]]:
        """The tensors stored with `t` and their offsets in the group's root."""
        root, _ = self.root(t)
        return self.members.get(root, [(root, 0)])

    def profile(self, order: Sequence[int]) -> list[int]:
        """Live bytes per step with the current groups and staging: built once, then kept up
        to date by `place` and `stage`."""
        if self._profile is None:
            scratch = dict(self.scratch)
            for op_index, nbytes in self.staging.items():
                scratch[op_index] = scratch.get(op_index, 0) + nbytes
            buffers = activation_buffers(
                self.graph, order, scratch, self.aliases, profiles=self.profiles, spans=self.spans
            )
            self._profile = live_bytes_per_step(buffers, len(order))
        return self._profile

    def stage(self, order: Sequence[int], op_index: int, nbytes: int) -> None:
        """Give operator `op_index` `nbytes` of staging scratch (replacing what it had)."""
        if self._profile is not None:
            apply_staging(self, self._profile, order, op_index, nbytes)
        self.staging[op_index] = nbytes

    def place(self, t: int, host: int, offset: int, *, span: int | None = None) -> None:
        """Move the whole group rooted at `t` into `host`'s group at `offset` from `host`; with
        `span`, `t` is a channel slice whose data spans that many bytes."""
        if self._profile is not None:
            apply_move(self, self._profile, t, host, offset, span)
        if span is not None:
            self.spans[t] = span
        host_root, host_offset = self.root(host)
        moved = [(m, off + offset + host_offset) for m, off in self.members.pop(t, [(t, 0)])]
        self.members.setdefault(host_root, [(host_root, 0)]).extend(moved)
        self.aliases[t] = (host, offset)

    def copy(self) -> Groups:
        """An independent copy, for trying several moves together."""
        return Groups(
            self.graph,
            self.life,
            self.scratch,
            dict(self.staging),
            dict(self.aliases),
            self.profiles,
            None if self._profile is None else list(self._profile),
            {root: list(members) for root, members in self.members.items()},
            dict(self.spans),
        )

    def extent(self, t: int, step: int | None = None) -> int:
        """Bytes from the start of `t`'s buffer to the end of its last member (with `step`: of
        its last member still used at `step` or later, `t` always counted)."""
        return max(
            off + self.spans.get(m, self.graph.tensors[m].nbytes)
            for m, off in self.group(t)
            if step is None or m == t or self.life[m][1] >= step
        )

    def dead_after(self, t: int, step: int) -> bool:
        """Every tensor stored with `t` is last used at or before `step`."""
        return all(self.life[m][1] <= step for m, _ in self.group(t))

    def touches_io(self, t: int, step: int | None = None) -> bool:
        """A graph output is stored with `t`, or a graph input (with `step`: one still used at
        `step`; an input that died before, such as one a convolution ran over, step 7 of
        plan/aliasing.py, is gone like any other dead tensor)."""
        outputs, inputs = set(self.graph.outputs), set(self.graph.inputs)
        return any(
            m in outputs or (m in inputs and (step is None or self.life[m][1] >= step))
            for m, _ in self.group(t)
        )


def segments(
    groups: Groups, members: Sequence[tuple[int, int]], spans: Mapping[int, int] | None = None
) -> tuple[tuple[int, int, int], ...]:
    """(first, last, bytes) runs of the buffer holding `members`, exactly as
    `activation_buffers` builds it; () when it would get no buffer."""
    placed = [
        (t, off) for t, off in members if groups.graph.tensors[t].nbytes > 0 and t in groups.life
    ]
    if not placed:
        return ()
    size, first, last, profile = group_extent(
        groups.graph, groups.life, placed, groups.profiles, groups.spans if spans is None else spans
    )
    return profile or ((first, last, size),)


def no_worse(
    graph: Graph,
    order: Sequence[int],
    groups: Groups,
    root: int,
    host: int,
    offset: int,
    *,
    staging: tuple[int, int] | None = None,
) -> bool:
    """Moving `root`'s group into `host` at `offset` (and giving operator `staging[0]` scratch
    `staging[1]`) keeps the peak live bytes no larger."""
    trial = trial_profile(order, groups, root, host, offset, staging)
    return max(trial, default=0) <= max(groups.profile(order), default=0)


def trial_profile(
    order: Sequence[int],
    groups: Groups,
    root: int,
    host: int,
    offset: int,
    staging: tuple[int, int] | None,
) -> list[int]:
    """The live bytes per step after the move `no_worse` considers, computed incrementally: the
    profile of the current groups changes only by the two merged buffers and one scratch."""
    live = list(groups.profile(order))
    apply_move(groups, live, root, host, offset)
    if staging is not None:
        apply_staging(groups, live, order, *staging)
    return live


def apply_move(
    groups: Groups, live: list[int], root: int, host: int, offset: int, span: int | None = None
) -> None:
    """Update the profile `live` for moving `root`'s group into `host`'s at `offset` (`root` a
    channel slice spanning `span` bytes once moved)."""
    host_root, host_offset = groups.root(host)
    moving = groups.group(root)
    staying = groups.group(host_root)
    merged = [*staying, *((m, off + offset + host_offset) for m, off in moving)]
    after = groups.spans if span is None else {**groups.spans, root: span}
    for members, sign, spans in ((moving, -1, None), (staying, -1, None), (merged, 1, after)):
        for first, last, size in segments(groups, members, spans):
            for step in range(first, last + 1):
                live[step] += sign * size


def apply_staging(
    groups: Groups, live: list[int], order: Sequence[int], op_index: int, nbytes: int
) -> None:
    """Update the profile `live` for giving operator `op_index` `nbytes` of staging scratch."""
    base = groups.scratch.get(op_index, 0)
    old = base + groups.staging.get(op_index, 0)
    live[order.index(op_index) + 1] += align_up(base + nbytes) - (align_up(old) if old > 0 else 0)
